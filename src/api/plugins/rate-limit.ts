/**
 * Rate limits (429 with Retry-After, docs/api.md#rate-limits): per signed-in user (whatever
 * credential: API key, OAuth token or session) and per address for anonymous requests. Counted in this server's memory:
 * behind a load balancer each server counts its own share, so a limit is per server. Agents and
 * the dashboard's static files are not counted. Runs after authentication (route-level hooks run
 * after the app's), so the user is known. The routes that take a password (OAuth's password grant,
 * the dashboard's sign-in) have no `access` of their own but are counted per address all the same:
 * otherwise nothing would slow down guessing passwords.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../../domain/errors.ts';
import type { KnownPaths } from '../known-paths.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route checks a password: counted per address like anonymous requests. */
    takesPassword?: boolean;
  }
}

export interface RateLimits {
  /** Requests per minute; 0: no limit. */
  readonly perUser: number;
  readonly perIp: number;
}

const WINDOW_MS = 60_000;

export async function registerRateLimits(app: FastifyInstance, limits: RateLimits, known: KnownPaths): Promise<void> {
  const limitOf = (request: FastifyRequest) => (request.user !== null ? limits.perUser : limits.perIp);
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: WINDOW_MS,
    max: (request) => limitOf(request),
    keyGenerator: (request) => (request.user !== null ? `user:${request.user.id}` : `ip:${request.ip}`),
    allowList: (request) => {
      const { takesPassword } = request.routeOptions.config;
      const access = known.accessOf(request);
      return (access === undefined && takesPassword !== true) || access === 'agent' || limitOf(request) === 0;
    },
    errorResponseBuilder: (request, context) =>
      new TooManyRequestsError(
        `Too many requests: at most ${context.max} a minute ${request.user !== null ? 'per user' : 'per address without signing in'}; try again in ${context.after}`,
      ),
  });
}
