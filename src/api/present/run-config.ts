/**
 * The TestRunConfig: a run's embedded `config`, the plan `POST /me/runs/config` answers and the
 * defaults `GET /me/runs/config` answers. The stored settings (domain/run-settings.ts) are shown as
 * stored, then the fields the established API's TestRunConfig carries besides them
 * (docs/api.md#fields-of-the-records), filled the same way for all three.
 */
import { frameworkById } from '../../domain/frameworks.ts';
import type { FileAction, UserFile } from '../../domain/files.ts';
import { RUN_CONFIG_DEFAULTS } from '../../domain/run-config.ts';
import type { RunSettings } from '../../domain/run-settings.ts';
import { type PresentContext, userPath } from './context.ts';
import Type from 'typebox';
import { ApiUserFile, presentFile } from './file.ts';
import { AlwaysNull, Bool, Count, Id, MaybeInt, MaybeStr, Str } from './fields.ts';
import { Nested, Nullable, type Rep, type Value, entity, entitySchema, rep } from './representation.ts';

const opt = Type.Optional;

const ACTION = Type.String({ description: 'INSTALL, RUN_TEST or COPY_TO_DEVICE' });

export const ApiTestRunConfigFile = entitySchema('apiTestRunConfigFile', {
  id: Id,
  selfURI: Str,
  action: ACTION,
  availableActions: Type.Array(ACTION),
  file: Nullable(Nested(ApiUserFile)),
});

/**
 * The settings as stored (passwords never shown). Older runs may hold fewer of them, and the store
 * may add some: the fields beyond these are answered as they are.
 */
const storedFields = {
  osType: opt(Nullable(Type.String({ description: "ANDROID or IOS; null in the defaults (the framework's)" }))),
  frameworkId: opt(Nullable(Id)),
  projectId: opt(MaybeInt),
  projectName: opt(MaybeStr),
  deviceGroupId: opt(Nullable(Id)),
  deviceIds: opt(Type.Array(Id)),
  files: opt(Type.Array(Nested(ApiTestRunConfigFile))),
  testRunName: opt(MaybeStr),
  timeout: opt(Type.Integer({ minimum: 0, description: 'Seconds per device' })),
  testRunParameters: opt(
    Type.Array(entitySchema('apiTestRunParameter', { key: Str, value: Str }, { title: 'apiTestRunConfigParameter' })),
  ),
  scheduler: opt(Str),
  hookURL: opt(MaybeStr),
  maxAutoRetriesCount: opt(Count),
  deviceLanguageCode: opt(Str),
  limitationType: opt(MaybeStr),
  limitationValue: opt(MaybeStr),
  instrumentationRunner: opt(MaybeStr),
  withAnnotation: opt(MaybeStr),
  withoutAnnotation: opt(MaybeStr),
  applicationUsername: opt(MaybeStr),
  launchApp: opt(Bool),
  deviceLocale: opt(MaybeStr),
  wifiEnabled: opt(Nullable(Bool)),
  googleAccountEmail: opt(MaybeStr),
};

const ApiTimeout = entitySchema('apiTimeout', { unit: Type.String({ description: 'SECONDS' }), value: Count });

/** The established API's TestRunConfig fields a stored config does not hold. */
const extraFields = {
  id: Nullable(Type.Integer({ minimum: 1, description: "The run's id; null before a run exists" })),
  selfURI: MaybeStr,
  testRunId: Nullable(Id),
  usedDeviceGroupId: Nullable(Id),
  usedDeviceGroupName: MaybeStr,
  runAvailable: Bool,
  computedDevices: Type.Array(Id),
  maxTestTimeout: Nested(ApiTimeout),
  appCrawlerRun: Bool,
  applicationPassword: AlwaysNull,
  appiumBrokerAddress: AlwaysNull,
  availableDeviceGroups: AlwaysNull,
  availableDevices: AlwaysNull,
  availableFrameworks: AlwaysNull,
  availableOsTypes: AlwaysNull,
  clientSideTestConfig: AlwaysNull,
  creditsPrice: Count,
  deviceNamePattern: AlwaysNull,
  disableResigning: Bool,
  resignFiles: Bool,
  loadedPrevious: Bool,
  screenshotDir: AlwaysNull,
  status: AlwaysNull,
  statusCode: AlwaysNull,
  testRunNameGrouping: AlwaysNull,
  tunnelSettings: AlwaysNull,
  useSamples: Bool,
  videoRecordingEnabled: Bool,
};

export const ApiTestRunConfig = Type.Object(
  { ...storedFields, ...extraFields },
  { title: 'apiTestRunConfig', xml: { name: 'apiTestRunConfig' }, additionalProperties: true },
);

/** `POST /me/runs/config`: the config filled in, with what a start would do. */
export const ApiTestRunPlan = Type.Object(
  {
    ...storedFields,
    ...extraFields,
    excludedDevices: Type.Array(
      entitySchema('apiExcludedDevice', { deviceId: Id, displayName: Str, excludeReason: MaybeStr }),
    ),
  },
  { title: 'apiTestRunPlan', xml: { name: 'apiTestRunConfig' }, additionalProperties: true },
);

/** What the config's extra fields are made of: known for a run, a plan or the defaults. */
export interface ConfigFacts {
  /** The run it belongs to, once there is one. */
  readonly runId: number | null;
  readonly projectId: number | null;
  readonly projectName: string | null;
  readonly usedDeviceGroupName: string | null;
  readonly runAvailable: boolean;
  readonly computedDevices: readonly number[];
  /** Seconds the caller's plan allows (docs/api.md#starting-runs). */
  readonly maxTimeout: number;
  /** The files the config names, where the caller has them at hand (the plan). */
  readonly files?: ReadonlyMap<number, UserFile>;
}

/** Every file may be copied to the device; an app may also be installed, a test package run. */
function availableActions(action: FileAction, file: UserFile | undefined): FileAction[] {
  const kind = file?.inputType ?? (action === 'INSTALL' ? 'APPLICATION' : action === 'RUN_TEST' ? 'TEST' : 'DATA');
  if (kind === 'APPLICATION') return ['INSTALL', 'COPY_TO_DEVICE'];
  if (kind === 'TEST') return ['RUN_TEST', 'COPY_TO_DEVICE'];
  return ['COPY_TO_DEVICE'];
}

function presentConfigFile(
  entry: { readonly id: number; readonly action: FileAction },
  facts: ConfigFacts,
  context: PresentContext,
): Rep {
  const file = facts.files?.get(entry.id);
  return entity(ApiTestRunConfigFile, {
    id: entry.id,
    selfURI: `${userPath(context)}/files/${entry.id}`,
    action: entry.action,
    availableActions: availableActions(entry.action, file),
    file: file === undefined ? null : presentFile(file, context),
  });
}

/** The extra fields, in the order they follow the stored ones. */
export function configExtras(
  settings: Partial<Pick<RunSettings, 'frameworkId' | 'deviceGroupId' | 'osType' | 'videoRecordingEnabled'>>,
  facts: ConfigFacts,
  context: PresentContext,
): Record<string, Value> {
  const framework = settings.frameworkId === undefined ? undefined : frameworkById(settings.frameworkId);
  return {
    id: facts.runId,
    selfURI:
      facts.runId === null || facts.projectId === null
        ? null
        : `${userPath(context)}/projects/${facts.projectId}/runs/${facts.runId}/config`,
    testRunId: facts.runId,
    usedDeviceGroupId: settings.deviceGroupId ?? null,
    usedDeviceGroupName: facts.usedDeviceGroupName,
    runAvailable: facts.runAvailable,
    computedDevices: [...facts.computedDevices],
    maxTestTimeout: entity(ApiTimeout, { unit: 'SECONDS', value: facts.maxTimeout }),
    appCrawlerRun: framework?.kind === 'crawler',
    // Never shown: it goes to the device only.
    applicationPassword: null,
    // The established service's web form choices, Appium broker, tunnels and billing have no
    // counterpart here: the lists are their own routes, and nothing is billed.
    appiumBrokerAddress: null,
    availableDeviceGroups: null,
    availableDevices: null,
    availableFrameworks: null,
    availableOsTypes: null,
    clientSideTestConfig: null,
    creditsPrice: 0,
    deviceNamePattern: null,
    // iOS apps are always re-signed with the service's own profile (docs/api.md#files).
    disableResigning: false,
    resignFiles: settings.osType === 'IOS',
    loadedPrevious: false,
    screenshotDir: null,
    status: null,
    statusCode: null,
    testRunNameGrouping: null,
    tunnelSettings: null,
    useSamples: false,
    // Stored only when off (domain/run-settings.ts): a run records unless it says not to.
    videoRecordingEnabled: settings.videoRecordingEnabled ?? RUN_CONFIG_DEFAULTS.videoRecordingEnabled,
  };
}

/** Item type names of the arrays a stored TestRunConfig holds. */
const CONFIG_ITEM_KINDS: Readonly<Record<string, string>> = {
  files: 'apiTestRunConfigFile',
  testRunParameters: 'apiTestRunParameter',
};

/** The TestRunConfig a run was started with (or would be), as stored, then its extra fields. */
export function presentStoredConfig(
  settings: RunSettings,
  facts: ConfigFacts,
  context: PresentContext,
  more: Readonly<Record<string, Value>> = {},
): Rep {
  // Written field by field rather than spread: spreading the settings and the extras into one
  // literal was a third of the CPU of presenting a list of runs (docs/benchmarks.md).
  const config: Record<string, Value> = {
    osType: settings.osType ?? null,
    frameworkId: settings.frameworkId ?? null,
    projectId: settings.projectId ?? null,
    projectName: facts.projectName,
  };
  const stored = settings as unknown as Readonly<Record<string, unknown>>;
  for (const key in stored) {
    if (key === 'v' || key === 'files') continue;
    config[key] = jsonValue(stored[key], CONFIG_ITEM_KINDS[key] ?? 'apiTestRunConfigItem');
  }
  config.files = settings.files.map((entry) => presentConfigFile(entry, facts, context));
  const extras = configExtras(settings, facts, context);
  for (const key in extras) config[key] = extras[key]!;
  for (const key in more) config[key] = more[key]!;
  return rep('apiTestRunConfig', config);
}

function jsonFields(object: Readonly<Record<string, unknown>>, kind: string): Record<string, Value> {
  const fields: Record<string, Value> = {};
  for (const key in object) fields[key] = jsonValue(object[key], CONFIG_ITEM_KINDS[key] ?? `${kind}Item`);
  return fields;
}

function jsonValue(value: unknown, kind: string): Value {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => jsonValue(item, kind));
  if (typeof value === 'object') return rep(kind, jsonFields(value as Record<string, unknown>, kind));
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}
