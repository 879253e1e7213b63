/**
 * The one place errors become answers: typed errors keep their status and message, Fastify's own
 * errors (validation, body too large, bad media type) are reworded to name the parameter, a
 * database that cannot be reached for a moment is a 503 with Retry-After, and anything unexpected
 * is a 500 whose details go to the log only. Unknown routes answer 404 in the same shape, or 405
 * with `Allow` when the path is known and only the method is not (known-paths.ts).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, MethodNotAllowedError, OAuthError, TooManyRequestsError } from '../../domain/errors.ts';
import type { KnownPaths } from '../known-paths.ts';
import type { Context } from '../../services/context.ts';
import { presentError } from '../present/error.ts';
import { REALM } from './auth.ts';
import { encodeFor } from './negotiate.ts';

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

export function registerErrorHandling(app: FastifyInstance, ctx: Context, known: KnownPaths): void {
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    // OAuth clients read RFC 6749/6750 errors, in JSON, whatever they accept.
    if (error instanceof OAuthError) {
      if (error.error === 'invalid_token')
        reply.header('WWW-Authenticate', `Bearer realm="${REALM}", error="invalid_token"`);
      // Written out here: the routes' compiled error serializer knows only {message, statusCode}
      // and would drop OAuth's fields.
      return reply
        .code(error.statusCode)
        .header('cache-control', 'no-store')
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ error: error.error, error_description: error.message }));
    }
    const unavailable = ctx.store.asUnavailable(error);
    if (unavailable !== undefined) {
      request.log.warn(`request failed for want of the database (${error.message}); answered 503`);
      reply.header('retry-after', String(unavailable.retryAfterSeconds));
      return send(reply, request, unavailable.statusCode, unavailable.message);
    }
    if (error instanceof TooManyRequestsError && error.retryAfterSeconds !== undefined)
      reply.header('retry-after', String(error.retryAfterSeconds));
    const { status, message } = describe(error, request);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    return send(reply, request, status, message);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const refusal = known.refusal(request);
    if (refusal instanceof MethodNotAllowedError) {
      reply.header('Allow', refusal.allowed.join(', '));
      return send(reply, request, refusal.statusCode, refusal.message);
    }
    if (refusal !== undefined) {
      frameworkErrors(refusal, request, reply);
      return reply;
    }
    return send(reply, request, 404, `No such resource: ${request.method} ${request.url.split('?')[0]}`);
  });
  // A HEAD refused with 405 answers as Fastify's HEAD routes do: the length of the body GET would
  // have had, and no body.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.method !== 'HEAD' || !request.is404 || reply.statusCode !== 405 || typeof payload !== 'string')
      return done(null, payload);
    reply.header('content-length', String(Buffer.byteLength(payload)));
    done(null, null);
  });
}

/**
 * Errors the router raises before any route or hook runs (a path that is not percent-encoded
 * UTF-8, a path segment beyond the length limit): Fastify would answer them in its own JSON shape.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode ?? 400;
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'The URL is not valid: a part of its path is not percent-encoded UTF-8'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'The URL is not valid: a part of its path is too long'
        : 'Invalid request';
  void send(reply, request, status >= 500 ? 400 : status, message);
}

function send(reply: FastifyReply, request: FastifyRequest, status: number, message: string) {
  const { contentType, payload } = encodeFor(request.headers.accept, presentError(status, message));
  return reply.code(status).type(contentType).send(payload);
}

function describe(error: FastifyError, request: FastifyRequest): { status: number; message: string } {
  if (error instanceof AppError) return { status: error.statusCode, message: error.message };
  if (error.validation) return { status: 400, message: validationMessage(error.validation as ValidationIssue[]) };
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: `The request body is too large (limit: ${request.routeOptions.bodyLimit} bytes)` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        message: `Unsupported Content-Type '${request.headers['content-type'] ?? ''}'; send application/x-www-form-urlencoded, application/json or multipart/form-data`,
      };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, message: error.message };
  return { status: 500, message: 'Internal server error; the details are in the server log' };
}

function validationMessage(issues: readonly ValidationIssue[]): string {
  const issue = issues[0];
  if (issue === undefined) return 'Invalid request';
  const missing = issue.params.missingProperty;
  if (typeof missing === 'string') return `Parameter '${missing}' is required`;
  const name =
    issue.instancePath
      .split('/')
      .filter((part) => part !== '' && !/^\d+$/.test(part))
      .join('.') || 'body';
  if (issue.keyword === 'enum') {
    return `Parameter '${name}' must be one of ${(issue.params.allowedValues as unknown[]).join(', ')}`;
  }
  return `Parameter '${name}' ${issue.message ?? 'is invalid'}`;
}
