/**
 * Which errors of the database drivers mean that the database is gone for a moment. The API reaches
 * this through the store it is given (Store.asUnavailable), not by importing the store.
 */
import { UnavailableError } from '../domain/errors.ts';

/** PostgreSQL's SQLSTATEs for a server that is going away or not there yet (class 08 is the connection's own). */
const GONE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const GONE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'SQLITE_BUSY']);
const GONE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * The error as an UnavailableError when it says the database cannot be reached for the moment
 * (a restart, a failover, SQLite locked beyond busy_timeout), so that clients are told to retry
 * (503) rather than shown an internal error; undefined for every other error.
 */
export function asUnavailable(error: unknown): UnavailableError | undefined {
  if (error instanceof UnavailableError) return error;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const gone =
    (typeof code === 'string' && (GONE_CODES.has(code) || GONE_STATES.has(code) || code.startsWith('08'))) ||
    (typeof message === 'string' && GONE_MESSAGES.test(message));
  return gone ? new UnavailableError(undefined, { cause: error }) : undefined;
}
