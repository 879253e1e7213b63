/**
 * Appium client side (docs/api.md#appium-client-side): what a WebDriver client's new-session
 * request asks of the cloud, read from its capabilities, and the W3C errors the hub answers with.
 * Pure: whether the key, the app and the device exist is the service's work.
 */

/** A W3C WebDriver error: `{value: {error, message, stacktrace}}` with the spec's HTTP status. */
export class WebDriverError extends Error {
  constructor(
    /** The spec's error code, e.g. `session not created`. */
    readonly error: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'WebDriverError';
  }
}

export const sessionNotCreated = (message: string) => new WebDriverError('session not created', 500, message);
export const invalidArgument = (message: string) => new WebDriverError('invalid argument', 400, message);
export const invalidSessionId = (id: string) =>
  new WebDriverError('invalid session id', 404, `No active session with id ${id.slice(0, 64)}`);

/** What the cloud reads from the capabilities; the rest go to the device's Appium server. */
export interface SessionRequest {
  readonly apiKey: string;
  readonly osType: 'ANDROID' | 'IOS';
  /** The project's name: found, or created with the platform's Appium type. */
  readonly project: string | null;
  /** The test run's name: sessions naming the same unfinished run of a project join it. */
  readonly testrun: string | null;
  /** A device id, or a device's name (case-insensitive). */
  readonly device: string | null;
  readonly findDevice: boolean;
  /** The id of a file uploaded with /me/files, installed before the session starts. */
  readonly app: number | null;
  /** Seconds the whole session may last. */
  readonly testTimeout: number | null;
  /** Seconds the session may wait in the queue for its device before newSession fails. */
  readonly queueTimeout: number | null;
  /** Seconds without a command after which the session ends (Appium's `newCommandTimeout`). */
  readonly newCommandTimeout: number;
  /** The merged capabilities without the cloud's own, as the device's Appium server reads them. */
  readonly capabilities: Readonly<Record<string, unknown>>;
}

/** Appium's default: a session without a command for this long is ended. */
export const DEFAULT_NEW_COMMAND_TIMEOUT_SECONDS = 60;

/** The cloud's options, under `bitbar:options`, or flat as `bitbar_<name>` / `testdroid_<name>` (older clients). */
const OPTION_NAMES = [
  'apiKey',
  'project',
  'testrun',
  'device',
  'findDevice',
  'app',
  'testTimeout',
  'queueTimeout',
  'description',
  'appiumVersion',
] as const;
type OptionName = (typeof OPTION_NAMES)[number];
const FLAT_PREFIXES = ['bitbar_', 'testdroid_', 'bitbar:'] as const;
const OPTIONS_KEYS = ['bitbar:options', 'testdroid:options'] as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The capabilities of a new-session body: W3C (`capabilities.alwaysMatch` + the first `firstMatch`) or legacy `desiredCapabilities`. */
export function mergedCapabilities(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw invalidArgument('The new-session body must be a JSON object with "capabilities"');
  const { capabilities, desiredCapabilities } = body;
  let merged: Record<string, unknown> = {};
  if (capabilities !== undefined) {
    if (!isObject(capabilities)) throw invalidArgument('"capabilities" must be a JSON object');
    const { alwaysMatch = {}, firstMatch = [{}] } = capabilities;
    if (!isObject(alwaysMatch)) throw invalidArgument('"capabilities.alwaysMatch" must be a JSON object');
    if (!Array.isArray(firstMatch) || firstMatch.length === 0 || !firstMatch.every(isObject))
      throw invalidArgument('"capabilities.firstMatch" must be a non-empty list of JSON objects');
    const first = firstMatch[0] as Record<string, unknown>;
    for (const key of Object.keys(first)) {
      if (key in alwaysMatch)
        throw invalidArgument(`Capability "${key}" is in both alwaysMatch and firstMatch; the W3C spec forbids it`);
    }
    merged = { ...alwaysMatch, ...first };
  }
  if (desiredCapabilities !== undefined) {
    if (!isObject(desiredCapabilities)) throw invalidArgument('"desiredCapabilities" must be a JSON object');
    // W3C wins where both are sent (clients send both for old servers).
    merged = { ...desiredCapabilities, ...merged };
  }
  if (capabilities === undefined && desiredCapabilities === undefined)
    throw invalidArgument('The new-session body needs "capabilities" (W3C) or "desiredCapabilities"');
  return merged;
}

/** Reads the cloud's options and the platform from the capabilities of a new-session body. */
export function parseSessionRequest(body: unknown): SessionRequest {
  const merged = mergedCapabilities(body);
  const options: Partial<Record<OptionName, unknown>> = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(merged)) {
    if ((OPTIONS_KEYS as readonly string[]).includes(key)) {
      if (!isObject(value)) throw invalidArgument(`Capability "${key}" must be a JSON object`);
      for (const [name, option] of Object.entries(value))
        if ((OPTION_NAMES as readonly string[]).includes(name)) options[name as OptionName] = option;
      continue;
    }
    const prefix = FLAT_PREFIXES.find((candidate) => key.startsWith(candidate));
    const name = prefix === undefined ? undefined : key.slice(prefix.length);
    if (name !== undefined && (OPTION_NAMES as readonly string[]).includes(name)) {
      options[name as OptionName] ??= value;
      continue;
    }
    rest[key] = value;
  }
  const apiKey = text(options.apiKey, 'apiKey');
  if (apiKey === null)
    throw sessionNotCreated(
      'The capability "bitbar:options": {"apiKey"} (or "bitbar_apiKey") is required: your API key',
    );
  const platform = text(merged.platformName ?? merged['appium:platformName'], 'platformName');
  let osType: SessionRequest['osType'];
  if (platform === null) throw invalidArgument('The capability "platformName" is required: Android or iOS');
  else if (/^android$/i.test(platform)) osType = 'ANDROID';
  else if (/^ios$/i.test(platform)) osType = 'IOS';
  else throw invalidArgument(`Capability "platformName" is ${JSON.stringify(platform)}; use Android or iOS`);
  return {
    apiKey,
    osType,
    project: text(options.project, 'project'),
    testrun: text(options.testrun, 'testrun'),
    device: text(options.device, 'device'),
    findDevice: flag(options.findDevice, 'findDevice'),
    app: fileId(options.app),
    testTimeout: seconds(options.testTimeout, 'testTimeout'),
    queueTimeout: seconds(options.queueTimeout, 'queueTimeout'),
    newCommandTimeout:
      seconds(merged['appium:newCommandTimeout'] ?? merged.newCommandTimeout, 'appium:newCommandTimeout') ??
      DEFAULT_NEW_COMMAND_TIMEOUT_SECONDS,
    capabilities: rest,
  };
}

function text(value: unknown, name: string): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' && typeof value !== 'number')
    throw invalidArgument(`Capability "${name}" must be a string`);
  const result = String(value).trim();
  if (result.length > 255) throw invalidArgument(`Capability "${name}" is longer than 255 characters`);
  return result === '' ? null : result;
}

function flag(value: unknown, name: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw invalidArgument(`Capability "${name}" must be true or false`);
}

function seconds(value: unknown, name: string): number | null {
  if (value === undefined || value === null || value === '') return null;
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0 || number > 7 * 24 * 3600)
    throw invalidArgument(`Capability "${name}" must be a whole number of seconds (0 to 604800)`);
  return number;
}

function fileId(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const id = typeof value === 'string' && /^\d{1,15}$/.test(value.trim()) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
    throw invalidArgument(
      `Capability "app" is ${JSON.stringify(value).slice(0, 80)}; give the id of a file uploaded with POST /me/files`,
    );
  return id;
}

/** A client's session id, or the device's: 32 hex digits. */
export const SESSION_ID = /^[0-9a-f]{32}$/;

/** A client's session: one per device run of an Appium client side run. */
export interface WebDriverSession {
  readonly id: string;
  readonly deviceRunId: number;
  readonly userId: number;
  readonly createTime: number;
  readonly endTime: number | null;
}

/** A command of a session: relayed to the device, then kept as the command log. */
export interface WebDriverCommand {
  readonly id: number;
  readonly deviceRunId: number;
  readonly method: string;
  readonly path: string;
  readonly body: string;
  readonly state: 'PENDING' | 'TAKEN' | 'ANSWERED';
  readonly status: number | null;
  readonly answer: string | null;
  readonly createTime: number;
  readonly answerTime: number | null;
}

/** A command relayed in memory and its answer, as the command log keeps it (services/webdriver-log.ts). */
export interface LoggedCommand {
  readonly deviceRunId: number;
  readonly method: string;
  readonly path: string;
  readonly body: string;
  readonly status: number;
  readonly answer: string;
  readonly createTime: number;
  readonly answerTime: number;
}
