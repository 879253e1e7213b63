/**
 * How device runs end and what follows: the run's own state (WAITING → RUNNING → FINISHED, always
 * derived from its device runs), automatic retries of infrastructure failures, the hook when a
 * run finishes, and the user's abort and retry. Callers pass a store already inside a transaction.
 */
import { runResultOf, scopesNotifiedBy } from '../domain/notifications.ts';
import { InvalidParameterError } from '../domain/errors.ts';
import {
  DEVICE_RUN_MACHINE,
  type DeviceRun,
  type DeviceRunState,
  type RetryState,
  type RunProgress,
  isFinal,
  runUpdate,
  whyNotRetryable,
} from '../domain/runs.ts';
import type { TestCase } from '../domain/test-cases.ts';
import { countTestCases } from '../domain/test-cases.ts';
import { agentTopic } from '../store/notifier.ts';
import type { Store } from '../store/store.ts';
import type { Context } from './context.ts';

export interface DeviceRunEnding {
  /** One of the targets of the device-run machine's `end`. */
  readonly state: Exclude<DeviceRunState, 'WAITING' | 'RUNNING' | 'FINISHING' | 'EXCLUDED'>;
  readonly failReason: string | null;
  /** null keeps what was reported before (e.g. an abort before any results). */
  readonly testCases: readonly TestCase[] | null;
  /** false: a WARNING that another try would end the same (the device refused the run's settings). */
  readonly retryable?: boolean;
}

/** Agents to wake after the transaction commits (new work, or runs to stop). */
export type Wakeups = Set<number>;

export function wake(ctx: Context, agents: Wakeups): void {
  for (const agentId of agents) ctx.notifier.notify(agentTopic(agentId));
}

/**
 * Ends a device run. A device run the user already ended (ABORTED) keeps its state, but results
 * that arrive for it are kept: partial results are still results.
 */
export async function endDeviceRun(
  store: Store,
  now: number,
  deviceRun: DeviceRun,
  ending: DeviceRunEnding,
  wakeups: Wakeups,
): Promise<void> {
  if (ending.testCases !== null) {
    // The counts mirror the stored test cases: none stored means nothing to replace.
    if (deviceRun.testCaseAllCount > 0) await store.results.deleteTestCases(deviceRun.id);
    await store.results.insertTestCases(deviceRun.id, ending.testCases);
  }
  const counts = ending.testCases === null ? null : countTestCases(ending.testCases);
  const ended = await store.deviceRuns.finish(deviceRun.id, {
    state: ending.state,
    endTime: now,
    counts: counts ?? {
      all: deviceRun.testCaseAllCount,
      passed: deviceRun.testCasePassedCount,
      failed: deviceRun.testCaseFailedCount,
      skipped: deviceRun.testCaseSkippedCount,
    },
    failReason: ending.failReason,
  });
  // `deviceRun` may have been read before a concurrent ender committed: only the call that ended it retries it.
  if (ended && ending.state === 'WARNING' && ending.retryable !== false && deviceRun.autoRetriesLeftCount > 0) {
    await requeue(store, now, deviceRun, 'AUTO', deviceRun.autoRetriesLeftCount - 1, wakeups);
  }
  // Another device run of the run still running (and held until this commit) keeps a RUNNING run
  // RUNNING, and its own end decides whether the run finished: no need for the run's lock.
  if (await store.queue.holdRunningSibling(deviceRun.testRunId, deviceRun.id)) return;
  await refreshRunState(store, deviceRun.testRunId, now);
}

/** Queues a device run again as a new device session that replaces the old one (unless a concurrent retry already did). */
async function requeue(
  store: Store,
  now: number,
  old: DeviceRun,
  retryState: RetryState,
  retriesLeft: number,
  wakeups: Wakeups,
): Promise<void> {
  if (!(await store.deviceRuns.markSuperseded(old.id))) return;
  await store.deviceRuns.insert({
    testRunId: old.testRunId,
    projectId: old.projectId,
    userId: old.userId,
    deviceId: old.deviceId,
    state: 'WAITING',
    excludeReason: null,
    createTime: now,
    timeLimit: old.timeLimit,
    retryState,
    autoRetriesLeftCount: retriesLeft,
    priority: old.priority,
    frameworkKind: old.frameworkKind,
    serialGroup: old.serialGroup,
    singleGroup: old.singleGroup,
    retriedFromId: old.id,
  });
  const device = await store.devices.findById(old.deviceId);
  if (device?.agentId != null) wakeups.add(device.agentId);
}

/**
 * Derives the run's state from its current device runs; a run that just finished fires its hook.
 * `known`: the progress, when the caller's own change decides it (a claimed device run is unfinished
 * and started, whatever the others are), which spares the query.
 */
export async function refreshRunState(
  store: Store,
  testRunId: number,
  now: number,
  known?: RunProgress,
): Promise<void> {
  // Two device runs of one run ending at once on PostgreSQL would each see the other still running.
  const run = await store.testRuns.stateForUpdate(testRunId);
  if (run === undefined) return;
  const update = runUpdate(run, known ?? (await store.deviceRuns.progressOfRun(testRunId)), now);
  if (update === null) return;
  if (update.state !== 'FINISHED') {
    await store.testRuns.setState(testRunId, update.state, {
      ...(update.startTime !== undefined && { startTime: update.startTime }),
      endTime: null,
    });
    return;
  }
  // Finished again too: a result arriving after an abort changes what the run adds up to.
  const tallies = (await store.testRuns.tallies([testRunId])).get(testRunId) ?? [];
  await store.testRuns.finish(testRunId, update, tallies);
  if (update.justFinished) {
    const hookUrl = await store.testRuns.hookUrlOf(testRunId);
    if (hookUrl !== null) await store.hooks.enqueue(testRunId, hookUrl, now);
    const result = runResultOf(new Set(tallies.map((tally) => tally.state)));
    await store.notifications.enqueueForRun(testRunId, scopesNotifiedBy(result), now);
  }
}

/** Aborts unfinished device runs: waiting ones at once, running ones too (their agents are told to stop). */
export async function abortDeviceRuns(ctx: Context, deviceRuns: readonly DeviceRun[]): Promise<void> {
  const now = ctx.clock();
  const wakeups: Wakeups = new Set();
  await ctx.store.transaction(async (store) => {
    const runIds = new Set<number>();
    for (const deviceRun of deviceRuns) {
      if (!DEVICE_RUN_MACHINE.can(deviceRun.state, 'abort')) continue;
      const ended = await store.deviceRuns.transition(deviceRun.id, 'abort', {
        endTime: now,
        failReason: 'aborted by the user',
      });
      if (ended && deviceRun.agentId !== null) wakeups.add(deviceRun.agentId);
      runIds.add(deviceRun.testRunId);
    }
    for (const runId of runIds) await refreshRunState(store, runId, now);
  });
  wake(ctx, wakeups);
}

/**
 * Retries device runs as new device sessions (docs/api.md#abort-retry-timeout: new ids, retryState
 * MANUAL); one still running is interrupted first (ABORTED, its agent told to stop), as the
 * established service does. Refuses them all, naming each, when any cannot be retried.
 */
export async function retryDeviceRuns(ctx: Context, deviceRuns: readonly DeviceRun[]): Promise<void> {
  const refusals = deviceRuns.flatMap((deviceRun) => {
    const why = whyNotRetryable(deviceRun);
    return why === null ? [] : [`device run ${deviceRun.id} ${why}`];
  });
  if (refusals.length > 0) throw new InvalidParameterError('deviceRunIds', `Cannot retry: ${refusals.join('; ')}`);
  const now = ctx.clock();
  const wakeups: Wakeups = new Set();
  await ctx.store.transaction(async (store) => {
    const runIds = new Set<number>();
    for (const deviceRun of deviceRuns) {
      if (!isFinal(deviceRun.state)) {
        const interrupted = await store.deviceRuns.transition(deviceRun.id, 'abort', {
          endTime: now,
          failReason: 'retried by the user',
        });
        if (interrupted && deviceRun.agentId !== null) wakeups.add(deviceRun.agentId);
      }
      await requeue(store, now, deviceRun, 'MANUAL', deviceRun.autoRetriesLeftCount, wakeups);
      runIds.add(deviceRun.testRunId);
    }
    for (const runId of runIds) await refreshRunState(store, runId, now);
  });
  wake(ctx, wakeups);
}
