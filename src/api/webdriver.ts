/**
 * The WebDriver hub at /wd/hub (docs/api.md#appium-client-side), on the API's port: Appium and
 * Selenium clients start sessions on the cloud's devices and send them commands. Not the public
 * API's shape: bodies are WebDriver JSON, errors W3C errors (`{value: {error, message,
 * stacktrace}}`), and the key travels in the capabilities, so the routes are anonymous; a
 * session's later commands are authorised by its id, 128 random bits only its client knows.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WebDriverError, invalidArgument } from '../domain/webdriver.ts';
import type { Context } from '../services/context.ts';
import { type WebDriverAnswer, relay } from '../services/webdriver.ts';
import { newSession } from '../services/webdriver-sessions.ts';
import type { WebDriverChannels } from '../services/webdriver-channels.ts';
import { VERSION } from '../version.ts';

export const HUB_PREFIX = '/wd/hub';
const config = { access: 'anonymous' as const };
const schema = { hide: true };
/** Commands carry screenshots and apps pushed to the device: larger than the API's forms. */
const BODY_LIMIT = 64 * 1024 * 1024;

export function registerWebDriverHub(app: FastifyInstance, ctx: Context, channels: WebDriverChannels): void {
  app.register(async (scope) => {
    // Bodies are relayed as the client sent them; only newSession's is read here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler(async (error: FastifyError, request, reply) => {
      if (error instanceof WebDriverError) return sendError(reply, error);
      const unavailable = ctx.store.asUnavailable(error);
      if (unavailable !== undefined)
        return sendError(reply, new WebDriverError('unknown error', 503, unavailable.message));
      if (error.statusCode === 429) return sendError(reply, new WebDriverError('unknown error', 429, error.message));
      if (error.statusCode !== undefined && error.statusCode < 500)
        return sendError(reply, invalidArgument(error.message));
      request.log.error({ err: error }, 'WebDriver request failed');
      return sendError(reply, new WebDriverError('unknown error', 500, 'The hub failed; try again'));
    });

    scope.get(`${HUB_PREFIX}/status`, { config, schema }, async (_request, reply) =>
      send(reply, {
        status: 200,
        body: JSON.stringify({
          value: { ready: true, message: 'devicecloud WebDriver hub', build: { version: VERSION } },
        }),
      }),
    );

    scope.post(`${HUB_PREFIX}/session`, { config, schema, bodyLimit: BODY_LIMIT }, async (request, reply) => {
      let body: unknown;
      try {
        body = JSON.parse(String(request.body ?? ''));
      } catch {
        throw invalidArgument('The new-session body is not JSON');
      }
      return send(reply, await newSession(ctx, body, clientGone(reply)));
    });

    const command = async (request: FastifyRequest, reply: FastifyReply) => {
      const { sessionId } = request.params as { sessionId: string };
      const path = request.url.slice(HUB_PREFIX.length).split('?')[0]!;
      const body = typeof request.body === 'string' ? request.body : '';
      return send(reply, await relay(ctx, channels, sessionId, request.method, path, body, clientGone(reply)));
    };
    // No `access`: a session's commands are authorised by its id alone, and not counted against the
    // address's rate limit (a CI machine's sessions send thousands); newSession, which takes a key, is.
    for (const url of [`${HUB_PREFIX}/session/:sessionId`, `${HUB_PREFIX}/session/:sessionId/*`])
      scope.route({ method: ['GET', 'POST', 'DELETE'], url, schema, bodyLimit: BODY_LIMIT, handler: command });

    scope.route({
      method: ['GET', 'POST', 'DELETE', 'PUT'],
      url: `${HUB_PREFIX}/*`,
      config,
      schema,
      handler: async (request, reply) =>
        sendError(
          reply,
          new WebDriverError('unknown command', 404, `Unknown command: ${request.method} ${request.url.split('?')[0]}`),
        ),
    });
  });
}

/** Aborted when the client hangs up before its answer: a waiting newSession gives its place up. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function send(reply: FastifyReply, answer: WebDriverAnswer) {
  return reply
    .code(answer.status)
    .header('cache-control', 'no-cache')
    .type('application/json; charset=utf-8')
    .send(answer.body);
}

function sendError(reply: FastifyReply, error: WebDriverError) {
  return send(reply, {
    status: error.status,
    body: JSON.stringify({ value: { error: error.error, message: error.message, stacktrace: '' } }),
  });
}
