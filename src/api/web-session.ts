/**
 * The dashboard's sign-in, outside /api (the established API has no such routes):
 * `POST /auth/session` (e-mail, password) sets the session cookie and answers the CSRF token;
 * `GET /auth/session` answers who is signed in (after a page reload); `DELETE /auth/session`
 * signs out. The API key is shown again only here, and only shortly after the password was
 * entered: `POST /auth/session/confirm` (password) makes the sign-in recent again, and
 * `POST /auth/api-key` answers the key. Everything else the dashboard does goes through the
 * public API with the cookie.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError, ForbiddenError, InvalidParameterError, UnsupportedMediaTypeError } from '../domain/errors.ts';
import { SecretKeyError } from '../domain/secret-keys.ts';
import type { User } from '../domain/users.ts';
import type { Context } from '../services/context.ts';
import { revealApiKey } from '../services/users.ts';
import {
  type Session,
  confirmPassword,
  recentUntil,
  requireRecentSignIn,
  sessionOf,
  signIn,
  signOut,
} from '../services/web-sessions.ts';

export const SESSION_COOKIE = 'dc_session';

/** Secure when the dashboard is reached over HTTPS (directly or, with trustProxy, behind a proxy). */
function cookieOptions(request: FastifyRequest, publicUrl: string | undefined, maxAgeSeconds: number) {
  const secure = request.protocol === 'https' || (publicUrl?.startsWith('https:') ?? false);
  return { path: '/', httpOnly: true, sameSite: 'strict' as const, secure, maxAge: maxAgeSeconds };
}

export function registerWebSession(app: FastifyInstance, ctx: Context, publicUrl: string | undefined): void {
  // The token itself only ever travels in the cookie.
  // `recentUntil`: until when the API key may be revealed without entering the password again
  // (`recent`: whether it still may, by the server's clock).
  const answer = (
    reply: FastifyReply,
    session: { user: User; csrfToken: string; expiresTime: number; authTime: number },
  ) =>
    reply
      .header('cache-control', 'no-store')
      .type('application/json; charset=utf-8')
      .send({
        userId: session.user.id,
        email: session.user.email,
        csrfToken: session.csrfToken,
        expiresTime: session.expiresTime,
        recentUntil: recentUntil(ctx, session),
        recent: ctx.clock() <= recentUntil(ctx, session),
      });

  /** The caller's dashboard session: these routes are the dashboard's, not for keys or tokens. */
  const sessionOfRequest = (request: FastifyRequest): Session => {
    if (request.credential?.kind !== 'session')
      throw new ForbiddenError('Only a dashboard session (signed in with the password) can do this');
    return request.credential.session;
  };

  // No auth hook (no `access`): signing in again while signed in needs no CSRF token. JSON only: a
  // page of another site cannot post JSON here, so it cannot sign a browser in to its own account.
  app.post('/auth/session', { schema: { hide: true }, config: { takesPassword: true } }, async (request, reply) => {
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      throw new UnsupportedMediaTypeError('Sign in with a JSON body: {"email": …, "password": …}');
    }
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<
      string,
      unknown
    >;
    const email = body.email;
    const password = body.password;
    if (typeof email !== 'string' || email === '')
      throw new InvalidParameterError('email', "Parameter 'email' is required");
    if (typeof password !== 'string' || password === '')
      throw new InvalidParameterError('password', "Parameter 'password' is required");
    const session = await signIn(ctx, email, password);
    reply.setCookie(
      SESSION_COOKIE,
      session.token,
      cookieOptions(request, publicUrl, Math.floor(ctx.limits.sessionTtlMs / 1000)),
    );
    return answer(reply, session);
  });

  app.get('/auth/session', { schema: { hide: true }, config: { access: 'anonymous' } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    const session = token === undefined ? undefined : await sessionOf(ctx, token);
    // Not being signed in is an answer, not an error: the dashboard asks before showing anything.
    if (session === undefined) return reply.code(204).send();
    return answer(reply, session);
  });

  app.post(
    '/auth/session/confirm',
    { schema: { hide: true }, config: { access: 'user', takesPassword: true } },
    async (request, reply) => {
      const session = sessionOfRequest(request);
      const password = (request.body as Record<string, unknown> | undefined)?.password;
      if (typeof password !== 'string' || password === '')
        throw new InvalidParameterError('password', "Parameter 'password' is required");
      return answer(reply, await confirmPassword(ctx, session, password));
    },
  );

  app.post('/auth/api-key', { schema: { hide: true }, config: { access: 'user' } }, async (request, reply) => {
    const session = sessionOfRequest(request);
    requireRecentSignIn(ctx, session);
    let apiKey: string;
    try {
      apiKey = await revealApiKey(ctx, session.user);
    } catch (error) {
      if (!(error instanceof SecretKeyError)) throw error;
      request.log.error({ userId: session.user.id, reason: error.message }, 'an API key cannot be unsealed');
      throw new ConflictError(
        'Your API key cannot be shown: this server lacks the key it was encrypted with (tell the operator). It still works; regenerate it to see a new one.',
      );
    }
    return reply.header('cache-control', 'no-store').type('application/json; charset=utf-8').send({ apiKey });
  });

  // Signing out needs the session (and, being a change, its CSRF token): the auth hook checks both.
  app.delete('/auth/session', { schema: { hide: true }, config: { access: 'user' } }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (token !== undefined) await signOut(ctx, token);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.code(204).send();
  });
}
