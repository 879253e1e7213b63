/**
 * Rate limits (API.md §2: 429 with Retry-After): per signed-in user (whatever credential: API key,
 * OAuth token or session) and per address for anonymous requests. Counted in this server's memory:
 * behind a load balancer each server counts its own share, so a limit is per server. Agents and
 * the dashboard's static files are not counted. Runs after authentication (route-level hooks run
 * after the app's), so the user is known.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TooManyRequestsError } from '../../domain/errors.ts';

export interface RateLimits {
  /** Requests per minute; 0: no limit. */
  readonly perUser: number;
  readonly perIp: number;
}

const WINDOW_MS = 60_000;

export async function registerRateLimits(app: FastifyInstance, limits: RateLimits): Promise<void> {
  const limitOf = (request: FastifyRequest) => (request.user !== null ? limits.perUser : limits.perIp);
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: WINDOW_MS,
    max: (request) => limitOf(request),
    keyGenerator: (request) => (request.user !== null ? `user:${request.user.id}` : `ip:${request.ip}`),
    allowList: (request) => {
      const access = request.routeOptions.config.access;
      return access === undefined || access === 'agent' || limitOf(request) === 0;
    },
    errorResponseBuilder: (request, context) =>
      new TooManyRequestsError(
        `Too many requests: at most ${context.max} a minute ${request.user !== null ? 'per user' : 'per address without signing in'}; try again in ${context.after}`,
      ),
  });
}
