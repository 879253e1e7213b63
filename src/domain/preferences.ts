/**
 * A user's preferences (docs/api.md#preferences), the established API's `APIUserPreference`:
 * `testTimeout` is the timeout, in seconds, of the runs they start without one, up to what their
 * plan allows. The dashboard's sign-in lasts a fixed time here, so `httpSessionMaxInactiveInterval`
 * reports it and cannot be changed.
 */
import { InvalidParameterError } from './errors.ts';
import { DEFAULT_TIMEOUT_SECONDS } from './project-config.ts';

export interface Preferences {
  readonly testTimeout: number;
  readonly defaultTestTimeout: number;
  readonly httpSessionMaxInactiveInterval: number;
  readonly defaultHttpSessionMaxInactiveInterval: number;
}

export function preferencesOf(testTimeout: number | null, sessionSeconds: number): Preferences {
  return {
    testTimeout: testTimeout ?? DEFAULT_TIMEOUT_SECONDS,
    defaultTestTimeout: DEFAULT_TIMEOUT_SECONDS,
    httpSessionMaxInactiveInterval: sessionSeconds,
    defaultHttpSessionMaxInactiveInterval: sessionSeconds,
  };
}

function integerOf(name: string, raw: unknown): number {
  const value = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (typeof raw === 'boolean' || String(raw).trim() === '' || !Number.isSafeInteger(value))
    throw new InvalidParameterError(name, `Parameter '${name}' must be a whole number of seconds`);
  return value;
}

/**
 * The new test timeout from a POST, or undefined when it does not change it. Clients send the
 * record back whole: the read-only fields are ignored, and `httpSessionMaxInactiveInterval` may be
 * sent as it is but not changed.
 */
export function checkPreferenceChanges(
  input: { testTimeout?: unknown; httpSessionMaxInactiveInterval?: unknown },
  current: Preferences,
  maxTimeout: number,
): number | undefined {
  if (input.httpSessionMaxInactiveInterval !== undefined && input.httpSessionMaxInactiveInterval !== null) {
    const seconds = integerOf('httpSessionMaxInactiveInterval', input.httpSessionMaxInactiveInterval);
    if (seconds !== current.httpSessionMaxInactiveInterval)
      throw new InvalidParameterError(
        'httpSessionMaxInactiveInterval',
        `Parameter 'httpSessionMaxInactiveInterval' cannot be changed: dashboard sign-ins last ${current.httpSessionMaxInactiveInterval} seconds here`,
      );
  }
  if (input.testTimeout === undefined || input.testTimeout === null) return undefined;
  const timeout = integerOf('testTimeout', input.testTimeout);
  if (timeout < 1 || timeout > maxTimeout)
    throw new InvalidParameterError(
      'testTimeout',
      `Parameter 'testTimeout' must be between 1 and ${maxTimeout} seconds (the most your plan allows)`,
    );
  return timeout;
}
