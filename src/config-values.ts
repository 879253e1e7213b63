/** The kinds of value settings take, and how each is read and checked (config.ts, config-agent.ts). */

/** A setting or a role's start-up cannot go on: the message (one line) says which and why. */
export class ConfigError extends Error {}

export type Raw = string | number | boolean;

export interface Setting<T> {
  readonly flag: string;
  readonly env: readonly string[];
  readonly fallback: T;
  /** The value is a secret: an error about it does not repeat it. */
  readonly secret?: boolean;
  parse(value: Raw): T;
}

export const text = (value: Raw) => String(value).trim();

export function whole(value: Raw, min: number, max: number, unit: string): number {
  const number = Number(text(value));
  if (!Number.isSafeInteger(number) || number < min || number > max)
    throw new Error(`must be a whole number of ${unit} from ${min} to ${max}`);
  return number;
}

export function guessesPerWindow(value: Raw): number {
  const count = Number(text(value));
  if (!Number.isInteger(count) || count < 0 || count > 1_000_000)
    throw new Error('must be a number of failed sign-ins per 15 minutes (0: no limit)');
  return count;
}

export function perMinute(value: Raw): number {
  const count = Number(text(value));
  if (!Number.isInteger(count) || count < 0 || count > 10_000_000)
    throw new Error('must be a number of requests per minute (0: no limit)');
  return count;
}

export function milliseconds(value: Raw, min: number, max: number): number {
  const ms = Number(text(value));
  if (!Number.isInteger(ms) || ms < min || ms > max) throw new Error(`must be milliseconds between ${min} and ${max}`);
  return ms;
}

export function oneOf<T extends string>(value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`must be one of ${allowed.join(', ')}`);
  return value as T;
}

export function yesOrNo(value: Raw): boolean {
  const lower = text(value).toLowerCase();
  if (['true', '1', 'yes'].includes(lower)) return true;
  if (['false', '0', 'no'].includes(lower)) return false;
  throw new Error('must be true or false');
}
