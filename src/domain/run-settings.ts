/**
 * A run's settings: the TestRunConfig it was started with, complete (defaults filled in) and
 * checked, as stored with the run and shown back as its `config`. One schema for the value, its
 * JSON in the store and its reading: what is read is validated, never cast.
 *
 * Secrets (the passwords the run hands the device) are not part of it: they are kept apart
 * (services seal them in their own table), so that no presenter, log or copy of the settings can
 * carry them. The field names are those of the API (and of rows written before versions), so that
 * a server of the previous release, still running during a rolling upgrade, reads new rows too.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { Validator } from 'typebox/compile';
import { FILE_ACTIONS } from './files.ts';
import type { DeviceSettings } from './flavours.ts';
import { LIMITATION_TYPES, SCHEDULERS } from './project-config.ts';

const Nullable = <S extends TSchema>(schema: S) => Type.Union([Type.Null(), schema]);
const Id = Type.Integer({ minimum: 1 });
const Text = Type.String();

export const RUN_SETTINGS_VERSION = 1;

/** The fields every version holds (version 0, before versions, had no `v` and held the passwords). */
const fields = {
  osType: Type.Enum(['ANDROID', 'IOS'] as const),
  frameworkId: Id,
  projectId: Id,
  deviceGroupId: Nullable(Id),
  deviceIds: Type.Array(Id),
  files: Type.Array(Type.Object({ id: Id, action: Type.Enum(FILE_ACTIONS) })),
  testRunName: Nullable(Text),
  timeout: Type.Integer({ minimum: 1 }),
  testRunParameters: Type.Array(Type.Object({ key: Text, value: Text })),
  scheduler: Type.Enum(SCHEDULERS),
  hookURL: Nullable(Text),
  maxAutoRetriesCount: Type.Integer({ minimum: 0 }),
  /** The language the tests see (not the device's locale). */
  deviceLanguageCode: Text,
  limitationType: Nullable(Type.Enum(LIMITATION_TYPES)),
  limitationValue: Nullable(Text),
  instrumentationRunner: Nullable(Text),
  withAnnotation: Nullable(Text),
  withoutAnnotation: Nullable(Text),
  /** Who the crawler signs in as; the password is a secret (RunSecrets). */
  applicationUsername: Nullable(Text),
  launchApp: Type.Boolean(),
  /** Device settings (domain/flavours.ts): present only when the run asks for some. */
  deviceLocale: Type.Optional(Nullable(Text)),
  wifiEnabled: Type.Optional(Nullable(Type.Boolean())),
  googleAccountEmail: Type.Optional(Nullable(Text)),
  /**
   * Present (false) only when the run records no video (docs/api.md#videos): rows of runs that
   * record, the default, stay readable by a server of the previous release.
   */
  videoRecordingEnabled: Type.Optional(Type.Boolean()),
};

export const RunSettings = Type.Object(
  { v: Type.Literal(RUN_SETTINGS_VERSION), ...fields },
  { additionalProperties: false },
);
export type RunSettings = Static<typeof RunSettings>;

/** Rows written before versions: the same fields, and the passwords among them. */
const RunSettingsV0 = Type.Object(
  {
    ...fields,
    applicationPassword: Type.Optional(Nullable(Text)),
    googleAccountPassword: Type.Optional(Nullable(Text)),
  },
  { additionalProperties: false },
);

/** What a run carries that no one but the device may see. */
export const RunSecrets = Type.Object(
  { v: Type.Literal(RUN_SETTINGS_VERSION), applicationPassword: Nullable(Text), googleAccountPassword: Nullable(Text) },
  { additionalProperties: false },
);
export type RunSecrets = Static<typeof RunSecrets>;

/** A stored value that does not have the shape its version promises (written by hand, or damaged). */
export class StoredValueError extends Error {}

/** The secrets a run asks for, or null when it has none (then nothing is sealed). */
export function runSecrets(
  applicationPassword: string | null,
  googleAccountPassword: string | null,
): RunSecrets | null {
  if (applicationPassword === null && googleAccountPassword === null) return null;
  return { v: RUN_SETTINGS_VERSION, applicationPassword, googleAccountPassword };
}

/** The settings' fields for the device settings a run asks for (none at all when it asks for none). */
export function deviceSettingsFields(
  settings: DeviceSettings | null,
): Pick<RunSettings, 'deviceLocale' | 'wifiEnabled' | 'googleAccountEmail'> {
  if (settings === null) return {};
  return {
    deviceLocale: settings.locale,
    wifiEnabled: settings.wifi,
    googleAccountEmail: settings.googleAccount?.email ?? null,
  };
}

/** The device settings the run asks for, its Google account's password back from the secrets. */
export function deviceSettingsOfRun(settings: RunSettings, secrets: RunSecrets | null): DeviceSettings | null {
  const { deviceLocale = null, wifiEnabled = null, googleAccountEmail = null } = settings;
  if (deviceLocale === null && wifiEnabled === null && googleAccountEmail === null) return null;
  return {
    locale: deviceLocale,
    wifi: wifiEnabled,
    googleAccount:
      googleAccountEmail === null
        ? null
        : { email: googleAccountEmail, password: secrets?.googleAccountPassword ?? '' },
  };
}

/** The crawler's sign-in, when the run gives a user name. */
export function credentialsOfRun(
  settings: RunSettings,
  secrets: RunSecrets | null,
): { username: string; password: string } | null {
  return settings.applicationUsername
    ? { username: settings.applicationUsername, password: secrets?.applicationPassword ?? '' }
    : null;
}

export function formatRunSettings(settings: RunSettings): string {
  return JSON.stringify(settings);
}

/**
 * The settings of a stored row, of any version; a row from before versions also gives the secrets
 * it held (rows a previous release writes during a rolling upgrade still hold them).
 */
export function readRunSettings(
  json: string,
  what: string,
): { settings: RunSettings; inlineSecrets: RunSecrets | null } {
  const value = parse(json, what);
  if (typeof value === 'object' && value !== null && 'v' in value)
    return { settings: checked(RunSettings, value, what), inlineSecrets: null };
  const { applicationPassword = null, googleAccountPassword = null, ...rest } = checked(RunSettingsV0, value, what);
  return {
    settings: { v: RUN_SETTINGS_VERSION, ...rest },
    inlineSecrets: runSecrets(applicationPassword, googleAccountPassword),
  };
}

export function formatRunSecrets(secrets: RunSecrets): string {
  return JSON.stringify(secrets);
}

export function readRunSecrets(json: string, what: string): RunSecrets {
  return checked(RunSecrets, parse(json, what), what);
}

function parse(json: string, what: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new StoredValueError(`${what} is not JSON`);
  }
}

/**
 * Validators compiled once per schema: every run read checks its settings, and typebox's
 * interpreted `Value.Check` took a quarter of the CPU of a 20-run list (docs/benchmarks.md).
 */
const validators = new WeakMap<TSchema, Validator>();

function checked<S extends TSchema>(schema: S, value: unknown, what: string): Static<S> {
  let validator = validators.get(schema);
  if (validator === undefined) validators.set(schema, (validator = Compile(schema) as unknown as Validator));
  if (validator.Check(value)) return value as Static<S>;
  const [first] = validator.Errors(value);
  // Only where and what rule: the value itself may hold what must not reach a log.
  throw new StoredValueError(
    `${what} does not have the stored shape (${first?.instancePath || '/'} ${first?.message ?? 'is invalid'})`,
  );
}
