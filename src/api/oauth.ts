/**
 * The OAuth 2.0 token endpoint, at the root (docs/api.md#oauth-20): `POST /oauth/token` with a form, or
 * `GET /oauth/token` with a query (the refresh grant: a password in a query is refused). It is not
 * an /api route: no API key is asked for (clients may send their client id as HTTP Basic), and
 * answers and errors are OAuth's JSON.
 */
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../domain/errors.ts';
import type { Context } from '../services/context.ts';
import { grantToken } from '../services/oauth.ts';

export function registerOAuth(app: FastifyInstance, ctx: Context): void {
  app.route({
    method: ['GET', 'POST'],
    url: '/oauth/token',
    schema: { hide: true },
    config: { takesPassword: true },
    handler: async (request, reply) => {
      // A URL is kept in proxies' logs and browsers' histories: a password never travels in one.
      if (Object.hasOwn(request.query as object, 'password')) {
        throw new OAuthError(
          'invalid_request',
          "Send the password in the body of a POST (a form: application/x-www-form-urlencoded), never in the URL's query",
        );
      }
      // A form (or JSON) body wins over the query, as on every route.
      const body =
        typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
      const answer = await grantToken(ctx, { ...(request.query as Record<string, unknown>), ...body });
      return reply
        .header('cache-control', 'no-store')
        .header('pragma', 'no-cache')
        .type('application/json; charset=utf-8')
        .send(answer);
    },
  });
}
