/**
 * Failed sign-ins per address on the routes that take a password (services/password-guesses.ts:
 * a sliding window kept in the store). The attempt is counted before the route runs, so that
 * guesses sent at the same moment see each other, and forgotten afterwards unless the answer says
 * the credentials were refused (400: OAuth's invalid_grant and other bad requests; 401: the
 * dashboard's sign-in): a sign-in, or a 429, is not a guess.
 */
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../services/context.ts';
import { type Guess, startAddressGuess } from '../../services/password-guesses.ts';

declare module 'fastify' {
  interface FastifyRequest {
    passwordGuess: Guess | null;
  }
}

export function registerPasswordGuesses(app: FastifyInstance, ctx: Context): void {
  app.decorateRequest('passwordGuess', null);
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config.takesPassword === true)
      request.passwordGuess = await startAddressGuess(ctx, request.ip);
  });
  // Before the answer leaves (not after it, as onResponse would): the client's next attempt must
  // find this one already forgotten.
  app.addHook('onSend', async (request, reply, payload) => {
    const guess = request.passwordGuess;
    if (guess !== null && reply.statusCode !== 400 && reply.statusCode !== 401) {
      request.passwordGuess = null;
      await guess
        .forget()
        .catch((error: unknown) =>
          request.log.warn(`a sign-in attempt could not be forgotten: ${(error as Error).message}`),
        );
    }
    return payload;
  });
}
