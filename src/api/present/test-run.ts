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
import { presentDeviceRun } from './device-run.ts';
import { type Rep, type Value, rep } from './representation.ts';

export function presentTestRun(view: RunView, context: PresentContext): Rep {
  const { run, stats } = view;
  const fields: Record<string, Value> = {
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
  if (view.deviceRuns !== undefined) fields.deviceRuns = view.deviceRuns.map((deviceRun) => presentDeviceRun(deviceRun, context));
  return rep('apiTestRun', fields);
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
  for (const [key, value] of Object.entries(object)) fields[key] = jsonValue(value, CONFIG_ITEM_KINDS[key] ?? `${kind}Item`);
  return fields;
}

function jsonValue(value: unknown, kind: string): Value {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => jsonValue(item, kind));
  if (typeof value === 'object') return rep(kind, jsonFields(value as Record<string, unknown>, kind));
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}
