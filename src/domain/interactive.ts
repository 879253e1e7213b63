/**
 * Interactive device sessions (docs/api.md#interactive-sessions): a user reserves a device, sees
 * its screen live and sends it input. What the user may send, read from a request and checked
 * here: whether the point is on the device's screen only the device knows (its agent answers 400).
 * Pure.
 */
import { InvalidParameterError } from './errors.ts';
import { PLAN_MAX_TIMEOUT_SECONDS, type Plan } from './users.ts';

/** The frameworks (domain/frameworks.ts) whose runs are interactive sessions, per platform. */
export const INTERACTIVE_FRAMEWORK = { ANDROID: 21, IOS: 22 } as const;
/** The project an interactive session's run is kept in, created on first use. */
export const INTERACTIVE_PROJECT = 'Interactive sessions';
/** A session without input for this long ends, unless the request asks for another idle timeout. */
export const DEFAULT_IDLE_SECONDS = 300;
export const MIN_IDLE_SECONDS = 30;
/** The run parameter the idle timeout travels to the agent in. */
export const IDLE_PARAMETER = 'DEVICECLOUD_IDLE_TIMEOUT';
/** Longest a session may last on each plan: the plan's test timeout (docs/api.md#interactive-sessions). */
export const maxSessionSeconds = (plan: Plan): number => PLAN_MAX_TIMEOUT_SECONDS[plan];

export const KEYS = ['home', 'back', 'power', 'volumeUp', 'volumeDown', 'enter', 'menu'] as const;
export type Key = (typeof KEYS)[number];
export const ORIENTATIONS = ['portrait', 'landscape'] as const;
export type Orientation = (typeof ORIENTATIONS)[number];
export const INPUT_ACTIONS = [
  'tap',
  'longPress',
  'swipe',
  'text',
  'key',
  'rotate',
  'install',
  'openUrl',
  'screenshot',
] as const;
export type InputAction = (typeof INPUT_ACTIONS)[number];

/** Largest coordinate asked of any screen; the device checks its own size. */
export const MAX_COORDINATE = 10_000;
export const MAX_TEXT_CHARS = 500;
export const MAX_URL_CHARS = 2000;
export const MAX_SWIPE_MS = 10_000;

export type Input =
  | { readonly action: 'tap'; readonly x: number; readonly y: number }
  | { readonly action: 'longPress'; readonly x: number; readonly y: number; readonly durationMs: number }
  | {
      readonly action: 'swipe';
      readonly x: number;
      readonly y: number;
      readonly toX: number;
      readonly toY: number;
      readonly durationMs: number;
    }
  | { readonly action: 'text'; readonly text: string }
  | { readonly action: 'key'; readonly key: Key }
  | { readonly action: 'rotate'; readonly orientation: Orientation }
  | { readonly action: 'install'; readonly fileId: number }
  | { readonly action: 'openUrl'; readonly url: string }
  | { readonly action: 'screenshot' };

/** An install as the agent receives it: the file's download path and what its upload found. */
export interface InstallPayload {
  readonly url: string;
  readonly name: string;
  readonly properties: Readonly<Record<string, string>>;
}

type Raw = Readonly<Record<string, unknown>>;

/** Reads one input from request parameters (form, query or JSON); a 400 names what is wrong. */
export function parseInput(raw: Raw): Input {
  const action = raw.action;
  if (typeof action !== 'string' || !(INPUT_ACTIONS as readonly string[]).includes(action))
    throw new InvalidParameterError(
      'action',
      `Parameter 'action' is ${JSON.stringify(action ?? null)?.slice(0, 40)}; use one of ${INPUT_ACTIONS.join(', ')}`,
    );
  switch (action as InputAction) {
    case 'tap':
      return { action: 'tap', x: coordinate(raw, 'x'), y: coordinate(raw, 'y') };
    case 'longPress':
      return {
        action: 'longPress',
        x: coordinate(raw, 'x'),
        y: coordinate(raw, 'y'),
        durationMs: whole(raw, 'durationMs', 100, MAX_SWIPE_MS) ?? 800,
      };
    case 'swipe':
      return {
        action: 'swipe',
        x: coordinate(raw, 'x'),
        y: coordinate(raw, 'y'),
        toX: coordinate(raw, 'toX'),
        toY: coordinate(raw, 'toY'),
        durationMs: whole(raw, 'durationMs', 1, MAX_SWIPE_MS) ?? 300,
      };
    case 'text': {
      const text = raw.text;
      if (typeof text !== 'string' || text === '')
        throw new InvalidParameterError('text', `Parameter 'text' is required: the text to type`);
      if ([...text].length > MAX_TEXT_CHARS)
        throw new InvalidParameterError('text', `Parameter 'text' is longer than ${MAX_TEXT_CHARS} characters`);
      // eslint-disable-next-line no-control-regex
      if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text))
        throw new InvalidParameterError('text', `Parameter 'text' holds control characters; send keys with action=key`);
      return { action: 'text', text };
    }
    case 'key':
      return { action: 'key', key: oneOf(raw, 'key', KEYS) };
    case 'rotate':
      return { action: 'rotate', orientation: oneOf(raw, 'orientation', ORIENTATIONS) };
    case 'install': {
      const id = whole(raw, 'fileId', 1, Number.MAX_SAFE_INTEGER);
      if (id === null)
        throw new InvalidParameterError(
          'fileId',
          `Parameter 'fileId' is required: an app uploaded with POST /me/files`,
        );
      return { action: 'install', fileId: id };
    }
    case 'openUrl': {
      const url = raw.url;
      if (typeof url !== 'string' || url.length > MAX_URL_CHARS || !/^https?:\/\/[^\s]+$/i.test(url))
        throw new InvalidParameterError(
          'url',
          `Parameter 'url' must be an http or https URL of at most ${MAX_URL_CHARS} characters`,
        );
      try {
        new URL(url);
      } catch {
        throw new InvalidParameterError('url', `Parameter 'url' is not a valid URL`);
      }
      return { action: 'openUrl', url };
    }
    case 'screenshot':
      return { action: 'screenshot' };
  }
}

/** Reads the input the agent receives (already checked by the server, checked again: it is a message). */
export function parseRelayedInput(body: string): Input & { readonly install?: InstallPayload } {
  const raw = JSON.parse(body) as Raw;
  const input = parseInput(raw);
  if (input.action !== 'install') return input;
  const install = raw.install as InstallPayload | undefined;
  if (install === undefined || typeof install.url !== 'string') throw new Error('an install without its file');
  return { ...input, install };
}

function number(raw: Raw, name: string): number | null {
  const value = raw[name];
  if (value === undefined || value === null || value === '') return null;
  const parsed = typeof value === 'string' && /^-?\d{1,16}$/.test(value.trim()) ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isSafeInteger(parsed))
    throw new InvalidParameterError(name, `Parameter '${name}' must be a whole number`);
  return parsed;
}

function whole(raw: Raw, name: string, min: number, max: number): number | null {
  const value = number(raw, name);
  if (value !== null && (value < min || value > max))
    throw new InvalidParameterError(name, `Parameter '${name}' is ${value}; it must be between ${min} and ${max}`);
  return value;
}

function coordinate(raw: Raw, name: string): number {
  const value = whole(raw, name, 0, MAX_COORDINATE);
  if (value === null)
    throw new InvalidParameterError(name, `Parameter '${name}' is required: a point on the screen, in its pixels`);
  return value;
}

function oneOf<T extends string>(raw: Raw, name: string, allowed: readonly T[]): T {
  const value = raw[name];
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw new InvalidParameterError(
      name,
      `Parameter '${name}' is ${JSON.stringify(value ?? null)?.slice(0, 40)}; use one of ${allowed.join(', ')}`,
    );
  return value as T;
}

/** What a session of `plan` may last, from what the request asked (seconds). */
export function sessionLength(plan: Plan, asked: number | undefined): number {
  const max = maxSessionSeconds(plan);
  if (asked === undefined) return max;
  if (asked < 60 || asked > max)
    throw new InvalidParameterError(
      'timeout',
      `Parameter 'timeout' is ${asked} seconds; your ${plan} plan allows sessions of 60 to ${max}`,
    );
  return asked;
}

export function idleTimeout(asked: number | undefined, length: number): number {
  if (asked === undefined) return Math.min(DEFAULT_IDLE_SECONDS, length);
  if (asked < MIN_IDLE_SECONDS || asked > length)
    throw new InvalidParameterError(
      'idleTimeout',
      `Parameter 'idleTimeout' is ${asked} seconds; it must be between ${MIN_IDLE_SECONDS} and the session's length (${length})`,
    );
  return asked;
}

/** A device busy with a session a user may see, and what shows its screen (docs/api.md#device-screens). */
export interface DeviceScreen {
  readonly deviceId: number;
  readonly deviceRunId: number;
  readonly interactive: boolean;
  /** The session's newest frame (interactive sessions), when it has one. */
  readonly frame: { readonly seq: number; readonly frameTime: number } | null;
  /** Else its newest screenshot (an output file), when it has one. */
  readonly screenshotFileId: number | null;
}
