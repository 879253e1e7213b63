/**
 * Checks of single parameter values shared by the forms and JSON bodies of several resources.
 * Form values arrive as text, JSON ones may be numbers or booleans: both are accepted.
 */
import { InvalidParameterError } from './errors.ts';

export function asText(parameter: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new InvalidParameterError(parameter, `Parameter '${parameter}' must be text`);
}

export function asInteger(parameter: string, value: unknown, min: number, max: number, hint = ''): number {
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new InvalidParameterError(
      parameter,
      `Parameter '${parameter}' must be an integer between ${min} and ${max}${hint}`,
    );
  }
  return number;
}

export function asId(parameter: string, value: unknown, what = 'an id'): number {
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < 1)
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' must be ${what} (a positive integer)`);
  return number;
}

export function asBoolean(parameter: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  // Only text is converted: String() of a deeply nested array recurses until the stack overflows.
  const lower = typeof value === 'string' ? value.toLowerCase() : '';
  if (lower === 'true' || lower === 'false') return lower === 'true';
  throw new InvalidParameterError(parameter, `Parameter '${parameter}' must be true or false`);
}

/** An http(s) URL, or null for an empty value (which clears the setting). */
export function asHookUrl(parameter: string, value: unknown): string | null {
  const url = asText(parameter, value).trim();
  if (url === '') return null;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' must be an http or https URL`);
  }
  return url;
}

const LANGUAGE_CODE = /^[a-z]{2,3}(?:[_-][A-Za-z]{2}|[_-]\d{3})?$/;

export function asLanguageCode(parameter: string, value: unknown): string {
  const code = typeof value === 'string' ? value.trim() : '';
  if (!LANGUAGE_CODE.test(code))
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' must be a locale such as en_US`);
  return code.replace('-', '_');
}

/** Names that can be environment variables of a test process. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
