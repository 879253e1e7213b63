import { displayName } from '../../domain/runs.ts';
import { errorsDeviceCount, executedTestCaseCount, executionRatio, successRatio } from '../../domain/run-stats.ts';
import { frameworkById } from '../../domain/frameworks.ts';
import type { RunView } from '../../services/views.ts';
import { type PresentContext, userPath } from './context.ts';
import Type, { type Static } from 'typebox';
import { ApiDeviceRun, presentDeviceRun } from './device-run.ts';
import { Bool, Count, Id, MaybeStr, MaybeTime, Ratio, RowIndex, SelfURI, Str, Time, Url } from './fields.ts';
import { ApiTestRunConfig, presentStoredConfig } from './run-config.ts';
import { PLAN_MAX_TIMEOUT_SECONDS } from '../../domain/users.ts';
import { Nested, Nullable, type Rep, entity, entitySchema } from './representation.ts';
import { deepFreeze } from '../../domain/deep-freeze.ts';

/** A run's tag (the established API's run tags); runs have none here yet. */
export const ApiTag = entitySchema('apiTag', { id: Id, name: Str });

export { ApiTestRunConfig, ApiTestRunPlan } from './run-config.ts';

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
  tags: Type.Array(Nested(ApiTag)),
  billable: Bool,
  logsFileId: Nullable(Id),
  screenshotsFileId: Nullable(Id),
  totalDeviceCount: Count,
  rowIndex: RowIndex,
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
    config: presentRunConfig(view, context),
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
    // Nothing is billed here; zips of a run's logs and screenshots are made on request.
    billable: false,
    logsFileId: null,
    screenshotsFileId: null,
    totalDeviceCount: stats.deviceCount,
    rowIndex: null,
  };
  if (view.deviceRuns !== undefined)
    fields.deviceRuns = view.deviceRuns.map((deviceRun) => presentDeviceRun(deviceRun, context));
  return entity(ApiTestRun, fields);
}

/**
 * A run's presented config, kept with its settings (one frozen object per stored run, which the
 * store keeps between reads: store/parsed-rows.ts) for as long as what else it shows holds: the
 * caller's own paths and plan, and the project's name. Presenting and writing each run's config
 * was a fifth of the CPU of a list of runs (docs/benchmarks.md, "API read path, fifth round").
 */
const presentedConfigs = new WeakMap<object, { readonly key: string; readonly config: Rep }>();

/** The TestRunConfig the run was started with (also `…/runs/{id}/config`). */
export function presentRunConfig(view: RunView, context: PresentContext): Rep {
  const { run } = view;
  const maxTimeout = maxTimeoutOf(context) ?? run.config.timeout;
  // The name last: it is the one part that may hold any character.
  const key = `${userPath(context)} ${maxTimeout} ${view.projectName}`;
  const kept = presentedConfigs.get(run.config);
  if (kept?.key === key) return kept.config;
  // Frozen: every request that reads the run shares it.
  const config = deepFreeze(
    presentStoredConfig(
      run.config,
      {
        runId: run.id,
        projectId: run.projectId,
        projectName: view.projectName,
        usedDeviceGroupName: null,
        // It was available: it started.
        runAvailable: true,
        computedDevices: run.config.deviceIds,
        maxTimeout,
      },
      context,
    ),
  );
  presentedConfigs.set(run.config, { key, config });
  return config;
}

/** Seconds the caller's plan allows a run (docs/api.md#starting-runs); none on anonymous routes. */
function maxTimeoutOf(context: PresentContext): number | undefined {
  return context.user === null ? undefined : (PLAN_MAX_TIMEOUT_SECONDS as Record<string, number>)[context.user.plan];
}
