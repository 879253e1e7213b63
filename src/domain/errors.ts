/**
 * Typed errors with stable codes. Every layer throws these; the HTTP layer renders them in one
 * place (api/plugins/errors.ts) as `{message, statusCode}` or `<apiExceptionMessage>`. The code is
 * stable for logs and tests; the message is for people and says what to change.
 */
export type ErrorCode =
  | 'INVALID_PARAMETER'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'STORAGE_QUOTA_EXCEEDED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RANGE_NOT_SATISFIABLE'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly statusCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A request parameter is missing or wrong. `parameter` names it for clients and tests. */
export class InvalidParameterError extends AppError {
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super('INVALID_PARAMETER', 400, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(
    message = 'Authentication required: use HTTP Basic with your API key as the user name and an empty password',
  ) {
    super('UNAUTHORIZED', 401, message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('FORBIDDEN', 403, message);
  }
}

/** Unknown id, or an id that belongs to someone else: the two are indistinguishable on purpose. */
export class NotFoundError extends AppError {
  constructor(
    readonly resource: string,
    id?: string | number,
  ) {
    super('NOT_FOUND', 404, id === undefined ? `${resource} not found` : `${resource} with id '${id}' not found`);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(
    method: string,
    path: string,
    readonly allowed: readonly string[],
  ) {
    super('METHOD_NOT_ALLOWED', 405, `Method ${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super('CONFLICT', 409, message);
  }
}

/**
 * A state change its machine's table does not allow (domain/state-machine.ts): the record is in a
 * state the event does not start from (`from`), or the event cannot lead to `to` (`from` null).
 * The record is left as it was.
 */
export class IllegalTransitionError extends ConflictError {
  constructor(
    readonly machine: string,
    readonly from: string | null,
    readonly event: string,
    readonly to: string,
    message = from === null
      ? `A ${machine} cannot become ${to} by ${event}`
      : `The ${machine} is ${from}: ${event} cannot make it ${to}`,
  ) {
    super(message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super('PAYLOAD_TOO_LARGE', 413, message);
  }
}

/**
 * Storing this would take the account beyond its storage quota (domain/storage.ts). A 413 like an
 * upload beyond the size limit (the request is refused for its size, and retrying it as it is
 * cannot help), with a code of its own so that clients and logs can tell the two apart.
 */
export class StorageQuotaExceededError extends AppError {
  constructor(
    message: string,
    /** The message without its advice, for a note where no one can act on it at once. */
    readonly summary: string = message,
  ) {
    super('STORAGE_QUOTA_EXCEEDED', 413, message);
  }
}

export class TooManyRequestsError extends AppError {
  /** When to try again, if known (the Retry-After header). */
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super('RATE_LIMITED', 429, message);
  }
}

/** The store cannot be reached for a moment (PostgreSQL restarting, SQLite locked too long): retry. */
export class UnavailableError extends AppError {
  readonly retryAfterSeconds = 2;
  constructor(
    message = 'The service cannot reach its database for a moment; retry in a few seconds',
    options?: { cause?: unknown },
  ) {
    super('UNAVAILABLE', 503, message, options);
  }
}

/** A Range request that starts beyond the end of the file (docs/api.md#files). */
export class RangeNotSatisfiableError extends AppError {
  constructor(readonly length: number) {
    super('RANGE_NOT_SATISFIABLE', 416, `The range asked for starts beyond the end of the file (${length} bytes)`);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super('UNSUPPORTED_MEDIA_TYPE', 415, message);
  }
}

export type OAuthErrorCode =
  'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_token';

/**
 * An error of the OAuth 2.0 token endpoint or of a bearer token (RFC 6749 §5.2, RFC 6750 §3.1):
 * rendered as `{"error", "error_description"}`, which OAuth clients expect, whatever Accept says.
 */
export class OAuthError extends AppError {
  constructor(
    readonly error: OAuthErrorCode,
    description: string,
  ) {
    const status = error === 'invalid_client' || error === 'invalid_token' ? 401 : 400;
    super(status === 401 ? 'UNAUTHORIZED' : 'INVALID_PARAMETER', status, description);
  }
}
