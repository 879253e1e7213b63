import {
  displayName,
  errorsDeviceCount,
  executedTestCaseCount,
  executionRatio,
  successRatio,
} from '../../domain/runs.ts';
import { frameworkById } from '../../domain/frameworks.ts';
import type { RunSettings } from '../../domain/run-settings.ts';
import type { RunView } from '../../services/views.ts';
import { type PresentContext, userPath } from './context.ts';
import Type, { type Static } from 'typebox';
import { ApiDeviceRun, presentDeviceRun } from './device-run.ts';
import { Bool, Count, Id, MaybeInt, MaybeStr, MaybeTime, Ratio, SelfURI, Str, Time, Url } from './fields.ts';
import { Nested, Nullable, type Rep, type Value, entity, entitySchema, rep } from './representation.ts';

const opt = Type.Optional;

/**
 * The TestRunConfig a run was started with, as stored (passwords never shown). Older runs may hold
 * fewer fields, and the store may add some: the fields beyond these are answered as they are.
 */
const configFields = {
  osType: opt(Nullable(Type.String({ description: "ANDROID or IOS; null in the defaults (the framework's)" }))),
  frameworkId: opt(Nullable(Id)),
  projectId: opt(MaybeInt),
  projectName: opt(MaybeStr),
  deviceGroupId: opt(Nullable(Id)),
  deviceIds: opt(Type.Array(Id)),
  files: opt(
    Type.Array(
      entitySchema('apiTestRunConfigFile', {
        id: Id,
        action: Type.String({ description: 'INSTALL, RUN_TEST or COPY_TO_DEVICE' }),
      }),
    ),
  ),
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

export const ApiTestRunConfig = Type.Object(configFields, {
  title: 'apiTestRunConfig',
  xml: { name: 'apiTestRunConfig' },
  additionalProperties: true,
});

/** `POST /me/runs/config`: the config filled in, with what a start would do. */
export const ApiTestRunPlan = Type.Object(
  {
    ...configFields,
    runAvailable: Bool,
    computedDevices: Type.Array(Id),
    excludedDevices: Type.Array(
      entitySchema('apiExcludedDevice', { deviceId: Id, displayName: Str, excludeReason: MaybeStr }),
    ),
    maxTestTimeout: entitySchema('apiTimeout', { unit: Type.String({ description: 'SECONDS' }), value: Count }),
  },
  { title: 'apiTestRunPlan', xml: { name: 'apiTestRunConfig' }, additionalProperties: true },
);

export const ApiTestRun = entitySchema('apiTestRun', {
  id: Id,
  selfURI: SelfURI,
  projectId: Id,
  projectName: Str,
  number: Count,
  displayName: Str,
  state: Str,
  createTime: Time,
  startTime: MaybeTime,
  endTime: MaybeTime,
  config: Nested(ApiTestRunConfig),
  frameworkId: Nullable(Id),
  frameworkName: MaybeStr,
  osType: Str,
  deviceCount: Count,
  waitingDeviceCount: Count,
  runningDeviceCount: Count,
  finishedDeviceCount: Count,
  succeededDeviceCount: Count,
  failedDeviceCount: Count,
  warningDeviceCount: Count,
  errorsDeviceCount: Count,
  excludedDeviceCount: Count,
  abortedDeviceCount: Count,
  timeoutedDeviceCount: Count,
  testCaseCount: Count,
  executedTestCaseCount: Count,
  successfulTestCaseCount: Count,
  failedTestCaseCount: Count,
  executionRatio: Ratio,
  successRatio: Ratio,
  startedById: Id,
  startedByDisplayName: MaybeStr,
  userId: Id,
  message: MaybeStr,
  queuePosition: Nullable(Type.Integer({ minimum: 1, description: '1: next to start on its device' })),
  uiLink: Url,
  tags: Type.Array(Str),
  deviceRuns: Type.Optional(Type.Array(Nested(ApiDeviceRun), { description: 'Only in the project listing' })),
});

export function presentTestRun(view: RunView, context: PresentContext): Rep {
  const { run, stats } = view;
  const fields: Static<typeof ApiTestRun> = {
    id: run.id,
    selfURI: `${userPath(context)}/projects/${run.projectId}/runs/${run.id}`,
    projectId: run.projectId,
    projectName: view.projectName,
    number: run.number,
    displayName: displayName(run),
    state: run.state,
    createTime: run.createTime,
    startTime: run.startTime,
    endTime: run.endTime,
    config: presentStoredConfig(run.config),
    frameworkId: run.frameworkId,
    frameworkName: run.frameworkId === null ? null : (frameworkById(run.frameworkId)?.name ?? null),
    osType: run.osType,
    deviceCount: stats.deviceCount,
    waitingDeviceCount: stats.waitingDeviceCount,
    runningDeviceCount: stats.runningDeviceCount,
    finishedDeviceCount: stats.finishedDeviceCount,
    succeededDeviceCount: stats.succeededDeviceCount,
    failedDeviceCount: stats.failedDeviceCount,
    warningDeviceCount: stats.warningDeviceCount,
    errorsDeviceCount: errorsDeviceCount(stats),
    excludedDeviceCount: stats.excludedDeviceCount,
    abortedDeviceCount: stats.abortedDeviceCount,
    timeoutedDeviceCount: stats.timeoutedDeviceCount,
    testCaseCount: stats.testCaseCount,
    executedTestCaseCount: executedTestCaseCount(stats),
    successfulTestCaseCount: stats.successfulTestCaseCount,
    failedTestCaseCount: stats.failedTestCaseCount,
    executionRatio: executionRatio(stats),
    successRatio: successRatio(stats),
    startedById: run.startedById,
    startedByDisplayName: view.startedByEmail,
    userId: run.userId,
    message: view.queue.message,
    queuePosition: view.queue.position,
    uiLink: `${context.baseUrl}/#/projects/${run.projectId}/runs/${run.id}`,
    tags: [],
  };
  if (view.deviceRuns !== undefined)
    fields.deviceRuns = view.deviceRuns.map((deviceRun) => presentDeviceRun(deviceRun, context));
  return entity(ApiTestRun, fields);
}

/** Item type names of the arrays a stored TestRunConfig holds. */
const CONFIG_ITEM_KINDS: Readonly<Record<string, string>> = {
  files: 'apiTestRunConfigFile',
  testRunParameters: 'apiTestRunParameter',
};

/** The TestRunConfig a run was started with, as it was stored (its secrets are not part of it). */
export function presentStoredConfig(settings: RunSettings, extra: Readonly<Record<string, unknown>> = {}): Rep {
  const { v: _version, ...shown } = settings;
  return rep('apiTestRunConfig', jsonFields({ ...shown, ...extra }, 'apiTestRunConfig'));
}

function jsonFields(object: Readonly<Record<string, unknown>>, kind: string): Record<string, Value> {
  const fields: Record<string, Value> = {};
  for (const [key, value] of Object.entries(object))
    fields[key] = jsonValue(value, CONFIG_ITEM_KINDS[key] ?? `${kind}Item`);
  return fields;
}

function jsonValue(value: unknown, kind: string): Value {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => jsonValue(item, kind));
  if (typeof value === 'object') return rep(kind, jsonFields(value as Record<string, unknown>, kind));
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}
