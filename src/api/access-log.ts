/**
 * One line per request in the server's log, written when the answer is sent: method, URL (secrets
 * redacted by the logger's `req` serializer), status and time. Fastify's default writes two, one
 * as a request comes in and one as it ends; at a few thousand reads a second the second line was
 * about 2% of a read's CPU (docs/benchmarks.md). A request that never ends still shows: the server
 * ends long polls itself, and a request that fails is logged by the error handler.
 *
 * A WebDriver command inside a session (`/wd/hub/session/{id}/…`) gets no line: the session's own
 * command log holds each one with its answer (docs/api.md#appium-client-side), and a test sends
 * thousands; the session's start and end (`POST /wd/hub/session`, `DELETE /wd/hub/session/{id}`)
 * are logged as any request, and so is a command answered with an error status.
 */
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

const WEBDRIVER_COMMAND = /^\/wd\/hub\/session\/[^/?]+\/[^?]/;

export class AccessLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error === null || error === undefined) {
      if (reply.statusCode >= 400 || !WEBDRIVER_COMMAND.test(request.url))
        reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    } else
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
  }
}
