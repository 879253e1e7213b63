/**
 * Authentication: every route is for signed-in users unless its table entry says `anonymous`.
 * The API key arrives as HTTP Basic user name with an empty password, an OAuth access token as a
 * bearer token or the `access_token` query parameter (docs/api.md#oauth-20), the dashboard's
 * session as a cookie (with a CSRF header on changes). Runs on
 * `onRequest`, before any body is read, so an unauthenticated upload is refused without reading it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../../domain/errors.ts';
import type { User } from '../../domain/users.ts';
import type { Context } from '../../services/context.ts';
import { type AgentTokens, agentTokenCache } from '../../services/agent-tokens.ts';
import { authenticateAccessToken } from '../../services/oauth.ts';
import { authenticateApiKey } from '../../services/users.ts';
import { type Session, csrfMatches, sessionOf } from '../../services/web-sessions.ts';
import { SESSION_COOKIE } from '../web-session.ts';
import type { Agent } from '../../domain/agents.ts';
import type { KnownPaths } from '../known-paths.ts';
import type { Access } from '../route.ts';

/**
 * How the caller proved who they are. The permanent credential (the API key) is shown only to a
 * caller that presented it; short-lived ones (OAuth tokens, dashboard sessions) do not reveal it.
 */
export type Credential =
  | { readonly kind: 'apiKey'; readonly key: string }
  | { readonly kind: 'oauth' }
  | { readonly kind: 'session'; readonly session: Session };

declare module 'fastify' {
  interface FastifyRequest {
    user: User | null;
    agent: Agent | null;
    credential: Credential | null;
  }
  interface FastifyContextConfig {
    access?: Access;
  }
}

export const REALM = 'devicecloud';

/** Returns the agent-token cache, which the agents' WebDriver socket authenticates its upgrade with too. */
export function registerAuth(app: FastifyInstance, ctx: Context, known: KnownPaths): AgentTokens {
  app.decorateRequest('user', null);
  app.decorateRequest('agent', null);
  app.decorateRequest('credential', null);
  const agentTokens = agentTokenCache(ctx);
  app.addHook('onClose', async () => agentTokens.close());
  app.addHook('onRequest', async (request, reply) => {
    const access = known.accessOf(request);
    if (access === undefined) return; // unknown route: the not-found handler answers
    if (access === 'agent') {
      request.agent = (await authenticateAgentRequest(agentTokens, request)) ?? null;
      if (request.agent === null) {
        reply.header('WWW-Authenticate', `Bearer realm="${REALM}-agents"`);
        throw new UnauthorizedError(
          'Agents authenticate with their token: Authorization: Bearer <token> (devicecloud admin create-agent-token)',
        );
      }
      return;
    }
    const credential = await authenticate(ctx, request);
    if (credential === 'bad') {
      reply.header('WWW-Authenticate', `Basic realm="${REALM}"`);
      throw new UnauthorizedError('Invalid API key: check the key shown in your account, or reset it');
    }
    const user = credential?.user ?? null;
    request.user = user;
    request.credential = credential?.credential ?? null;
    if (access === 'anonymous') return;
    if (user === null) {
      reply.header('WWW-Authenticate', `Basic realm="${REALM}"`);
      throw new UnauthorizedError();
    }
    if (access === 'admin' && user.role !== 'ADMIN') throw new ForbiddenError('This operation needs the ADMIN role');
  });
  return agentTokens;
}

async function authenticateAgentRequest(agentTokens: AgentTokens, request: FastifyRequest): Promise<Agent | undefined> {
  const [scheme, token] = (request.headers.authorization ?? '').split(' ', 2);
  if (scheme?.toLowerCase() !== 'bearer' || token === undefined) return undefined;
  return agentTokens.verify(token);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The dashboard's session cookie. A request that changes something must carry the session's CSRF
 * token in X-CSRF-Token: another site can make a browser send the cookie, never the header.
 */
async function authenticateSession(ctx: Context, request: FastifyRequest): Promise<Authenticated | null> {
  const token = request.cookies?.[SESSION_COOKIE];
  if (token === undefined || token === '') return null;
  const session = await sessionOf(ctx, token);
  if (session === undefined) return null;
  if (
    !SAFE_METHODS.has(request.method) &&
    !csrfMatches(session.csrfToken, request.headers['x-csrf-token'] as string | undefined)
  ) {
    throw new ForbiddenError(
      'This change needs the X-CSRF-Token header of the signed-in session (GET /auth/session answers it)',
    );
  }
  return { user: session.user, credential: { kind: 'session', session } };
}

interface Authenticated {
  readonly user: User;
  readonly credential: Credential;
}

async function bearer(ctx: Context, token: string): Promise<Authenticated> {
  return { user: await authenticateAccessToken(ctx, token), credential: { kind: 'oauth' } };
}

/**
 * The caller, null when no credentials were sent, 'bad' when the API key was wrong. An OAuth
 * access token (`Authorization: Bearer …` or `?access_token=…`) that does not work throws
 * invalid_token, answered in OAuth's shape.
 */
async function authenticate(ctx: Context, request: FastifyRequest): Promise<Authenticated | null | 'bad'> {
  const header = request.headers.authorization;
  const queryToken = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (header === undefined || header === '') {
    if (typeof queryToken === 'string' && queryToken !== '') return bearer(ctx, queryToken);
    return authenticateSession(ctx, request);
  }
  const [scheme, token] = header.split(' ', 2);
  if (scheme?.toLowerCase() === 'bearer' && token !== undefined) return bearer(ctx, token);
  if (scheme?.toLowerCase() !== 'basic' || token === undefined) return 'bad';
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const separator = decoded.indexOf(':');
  const key = separator === -1 ? decoded : decoded.slice(0, separator);
  const user = await authenticateApiKey(ctx, key);
  return user === undefined ? 'bad' : { user, credential: { kind: 'apiKey', key } };
}
