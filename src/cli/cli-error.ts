/**
 * How the client commands end: the exit codes CI scripts branch on, and the one line a failure
 * prints. 0 every device run succeeded (or the command did its job), 1 tests failed, 2 the cloud
 * could not run or finish the tests (infrastructure errors, timeouts, server unreachable or
 * failing), 3 bad usage (arguments, files, credentials, unknown ids).
 */
import { ApiError, ConnectionError } from '../client/api-client.ts';

export const EXIT = { OK: 0, TESTS_FAILED: 1, INFRASTRUCTURE: 2, USAGE: 3, INTERRUPTED: 130 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.USAGE,
  ) {
    super(message);
  }
}

/** The exit code and line for an error from the client, or undefined for anything else. */
export function describeClientError(error: unknown): { code: number; line: string } | undefined {
  if (error instanceof CliError) return { code: error.exitCode, line: error.message };
  if (error instanceof ConnectionError) return { code: EXIT.INFRASTRUCTURE, line: error.message };
  if (error instanceof ApiError) {
    if (error.status === 401)
      return {
        code: EXIT.USAGE,
        line: `the server refused the API key (401): ${error.message}. Check --api-key, DEVICECLOUD_API_KEY or devicecloud login`,
      };
    if (error.status >= 500)
      return { code: EXIT.INFRASTRUCTURE, line: `the server failed (${error.status}): ${error.message}` };
    return { code: EXIT.USAGE, line: `${error.message} (${error.status})` };
  }
  return undefined;
}
