/**
 * Failed sign-ins per address on the routes that take a password (services/password-guesses.ts:
 * a sliding window kept in the store). The attempt is counted before the route runs, so that
 * guesses sent at the same moment see each other, and forgotten afterwards unless the answer says
 * the credentials were refused (400: OAuth's invalid_grant and other bad requests; 401: the
 * dashboard's sign-in): a sign-in, or a 429, is not a guess.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../services/context.ts';
import { type Guess, startAddressGuess } from '../../services/password-guesses.ts';

declare module 'fastify' {
  interface FastifyRequest {
    passwordGuess: Guess | null;
  }
}

/**
 * Hooks of the routes that take a password only (`config.takesPassword`), added to each as it is
 * registered: every other request skips them. So it must be called before those routes are added.
 */
export function registerPasswordGuesses(app: FastifyInstance, ctx: Context): void {
  app.decorateRequest('passwordGuess', null);
  const start = async (request: FastifyRequest) => {
    request.passwordGuess = await startAddressGuess(ctx, request.ip);
  };
  // Before the answer leaves (not after it, as onResponse would): the client's next attempt must
  // find this one already forgotten.
  const forget = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
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
  };
  app.addHook('onRoute', (route) => {
    if ((route.config as { takesPassword?: boolean } | undefined)?.takesPassword !== true) return;
    route.preHandler = [...hooksOf(route.preHandler), start];
    route.onSend = [...hooksOf(route.onSend), forget];
  });
}

function hooksOf<H>(hooks: H | H[] | undefined): H[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
