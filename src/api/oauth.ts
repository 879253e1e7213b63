/**
 * The OAuth 2.0 token endpoint, at the root (API.md §3): `POST /oauth/token` with a form, or
 * `GET /oauth/token` with a query. It is not an /api route: no API key is asked for (clients may
 * send their client id as HTTP Basic), and answers and errors are OAuth's JSON.
 */
import type { FastifyInstance } from 'fastify';
import type { Context } from '../services/context.ts';
import { grantToken } from '../services/oauth.ts';

export function registerOAuth(app: FastifyInstance, ctx: Context): void {
  app.route({
    method: ['GET', 'POST'],
    url: '/oauth/token',
    schema: { hide: true },
    config: { takesPassword: true },
    handler: async (request, reply) => {
      // A form (or JSON) body wins over the query, as on every route.
      const body = typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
      const answer = await grantToken(ctx, { ...(request.query as Record<string, unknown>), ...body });
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').type('application/json; charset=utf-8').send(answer);
    },
  });
}
