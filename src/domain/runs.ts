/**
 * Test runs and device runs (device sessions): their states, how a run's state follows from its
 * device runs, and the legacy view's status mapping. Its counters: run-stats.ts.
 */
import type { ListSpec } from './list-query.ts';
import type { OsType } from './projects.ts';
import type { RunSettings } from './run-settings.ts';
import type { StateTally } from './run-stats.ts';
import { stateMachine } from './state-machine.ts';

export const TEST_RUN_STATES = ['WAITING', 'RUNNING', 'FINISHED'] as const;
export type TestRunState = (typeof TEST_RUN_STATES)[number];

export const DEVICE_RUN_STATES = [
  'WAITING',
  'RUNNING',
  'FINISHING',
  'SUCCEEDED',
  'FAILED',
  'WARNING',
  'TIMEOUT',
  'ABORTED',
  'EXCLUDED',
] as const;
export type DeviceRunState = (typeof DEVICE_RUN_STATES)[number];

/**
 * How a device run's state changes, and nothing else changes it. Created WAITING (or EXCLUDED, when
 * its device cannot take the run); a retry does not change an ended device run, it queues a new one.
 */
export const DEVICE_RUN_MACHINE = stateMachine<DeviceRunState, 'claim' | 'sendResults' | 'end' | 'abort' | 'exclude'>({
  name: 'device run',
  states: DEVICE_RUN_STATES,
  initial: ['WAITING', 'EXCLUDED'],
  events: {
    /** An agent's claim took it for a free device. */
    claim: { from: ['WAITING'], to: ['RUNNING'] },
    /** Its agent began sending the results (step SENDING_RESULTS). */
    sendResults: { from: ['RUNNING'], to: ['FINISHING'] },
    /** Its agent reported the outcome, or was lost (restarted, or its lease ran out: WARNING). */
    end: { from: ['RUNNING', 'FINISHING'], to: ['SUCCEEDED', 'FAILED', 'WARNING', 'TIMEOUT', 'ABORTED'] },
    /** The user aborted it; a running one's agent is told to stop. */
    abort: { from: ['WAITING', 'RUNNING', 'FINISHING'], to: ['ABORTED'] },
    /** Another device took its SINGLE run. */
    exclude: { from: ['WAITING'], to: ['EXCLUDED'] },
  },
});

/** Final: no event leaves them (results may still arrive for an ABORTED one, its state stays). */
export const FINAL_DEVICE_RUN_STATES: ReadonlySet<DeviceRunState> = new Set(DEVICE_RUN_MACHINE.final);

export function isFinal(state: DeviceRunState): boolean {
  return FINAL_DEVICE_RUN_STATES.has(state);
}

/**
 * Why the user cannot retry a device run, or null when a retry replaces it with a new session
 * (docs/api.md#abort-retry-timeout). A running one can be retried: as on the established service,
 * the retry interrupts it first. A waiting one has nothing to retry yet, and an excluded one cannot
 * run on its device.
 */
export function whyNotRetryable(deviceRun: Pick<DeviceRun, 'state' | 'superseded' | 'excludeReason'>): string | null {
  if (deviceRun.superseded) return 'was already retried; retry its newest session';
  if (deviceRun.state === 'WAITING') return 'has not started yet; it will run as it is';
  if (deviceRun.state === 'EXCLUDED') return `was excluded (${deviceRun.excludeReason}); it cannot run on that device`;
  return null;
}

/** Not final: what keeps a run from being FINISHED. */
export const UNFINISHED_DEVICE_RUN_STATES: readonly DeviceRunState[] = DEVICE_RUN_STATES.filter(
  (state) => !isFinal(state),
);

/** Held by an agent: what its lease covers, from the claim until it ends. */
export const HELD_DEVICE_RUN_STATES: readonly DeviceRunState[] = DEVICE_RUN_MACHINE.from('end');

export function isHeld(state: DeviceRunState): boolean {
  return HELD_DEVICE_RUN_STATES.includes(state);
}

/** Why a device of the group gets no real device run (kept as EXCLUDED). */
export const EXCLUDE_REASONS = ['FRAMEWORK_NOT_SUPPORTED', 'API_LEVEL', 'NO_DEVICE', 'ADMIN'] as const;
export type ExcludeReason = (typeof EXCLUDE_REASONS)[number];

export const RETRY_STATES = ['NONE', 'MANUAL', 'AUTO'] as const;
export type RetryState = (typeof RETRY_STATES)[number];

/** The step timeline of a device run. */
export const STEP_TYPES = [
  'WAITING',
  'PREPARING',
  'UNINSTALL',
  'INSTALL',
  'RUNNING',
  'SENDING_RESULTS',
  'PROCESSING_RESULTS',
] as const;
export type StepType = (typeof STEP_TYPES)[number];
/** The steps an agent reports (a device run waits on the server, not on a device). */
export const AGENT_STEP_TYPES = [
  'PREPARING',
  'UNINSTALL',
  'INSTALL',
  'RUNNING',
  'SENDING_RESULTS',
  'PROCESSING_RESULTS',
] as const satisfies readonly StepType[];

/** How a device run the agent ran stopped: the final states it reports (EXCLUDED is the server's). */
export const DEVICE_RUN_OUTCOMES = [
  'SUCCEEDED',
  'FAILED',
  'WARNING',
  'TIMEOUT',
  'ABORTED',
] as const satisfies readonly DeviceRunState[];
export type DeviceRunOutcome = (typeof DEVICE_RUN_OUTCOMES)[number];

/** The legacy device-run view knows fewer states (docs/api.md#device-runs-and-device-sessions). */
export const LEGACY_RUN_STATUSES = ['WAITING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'WARNING', 'EXCLUDED'] as const;
export type LegacyRunStatus = (typeof LEGACY_RUN_STATUSES)[number];

export function legacyRunStatus(state: DeviceRunState): LegacyRunStatus {
  switch (state) {
    case 'WAITING':
    case 'RUNNING':
    case 'SUCCEEDED':
    case 'FAILED':
    case 'WARNING':
    case 'EXCLUDED':
      return state;
    case 'FINISHING':
      return 'RUNNING';
    // Neither is a test failure: the legacy view reports both as "could not complete".
    case 'TIMEOUT':
    case 'ABORTED':
      return 'WARNING';
  }
}

export interface TestRun {
  readonly id: number;
  readonly projectId: number;
  readonly userId: number;
  /** Per project, from 1. */
  readonly number: number;
  readonly name: string | null;
  readonly state: TestRunState;
  readonly createTime: number;
  readonly startTime: number | null;
  readonly endTime: number | null;
  /** The TestRunConfig the run was started with, complete; its secrets are kept apart. */
  readonly config: RunSettings;
  readonly frameworkId: number | null;
  readonly startedById: number;
  readonly osType: OsType;
  /** What its device runs added up to when it finished; null while it is not finished. */
  readonly finalTallies: readonly StateTally[] | null;
}

export function displayName(run: Pick<TestRun, 'name' | 'number'>): string {
  return run.name ?? `Test Run ${run.number}`;
}

export interface DeviceRun {
  readonly id: number;
  readonly testRunId: number;
  readonly projectId: number;
  readonly userId: number;
  readonly deviceId: number;
  readonly state: DeviceRunState;
  readonly excludeReason: ExcludeReason | null;
  readonly createTime: number;
  readonly installTime: number | null;
  readonly startTime: number | null;
  readonly endTime: number | null;
  /** Seconds the tests may run. */
  readonly timeLimit: number;
  readonly testCaseAllCount: number;
  readonly testCasePassedCount: number;
  readonly testCaseFailedCount: number;
  readonly testCaseSkippedCount: number;
  readonly retryState: RetryState;
  readonly autoRetriesLeftCount: number;
  readonly currentStep: StepType | null;
  readonly currentStepStartTime: number | null;
  /** Why it ended as WARNING/TIMEOUT/ABORTED, or why its tests could not report. */
  readonly failReason: string | null;
  /** Retried: listed, but no longer counted in its run's figures. */
  readonly superseded: boolean;
  /** The agent holding it while it runs. */
  readonly agentId: number | null;
  readonly frameworkKind: string | null;
  readonly retriedFromId: number | null;
  /** The owner's plan priority when queued; higher goes first. */
  readonly priority: number;
  readonly serialGroup: number | null;
  readonly singleGroup: number | null;
}

/** One step of a device run's timeline (waiting, installing, running, …); the open one has no finish time. */
export interface Step {
  readonly id: number;
  readonly deviceRunId: number;
  readonly type: StepType;
  readonly startTime: number;
  readonly finishTime: number | null;
  readonly failReason: string | null;
}

/** A CPU/memory sample a device run reported (cpuUsage 0..1, memUsage in KiB). */
export interface StoredSample {
  readonly timestamp: number;
  readonly cpuUsage: number;
  readonly memUsage: number | null;
  readonly packageName: string | null;
}

export function deviceRunDuration(run: Pick<DeviceRun, 'startTime' | 'endTime'>, now: number): number {
  if (run.startTime === null) return 0;
  return (run.endTime ?? now) - run.startTime;
}

/**
 * The run's state machine is its device runs': a run waits while every current device run is as it
 * was created (WAITING, EXCLUDED), and is finished when every one is final. So any state may follow
 * any other (a retry reopens a finished run; an automatic retry of its only started device run
 * makes a running run wait again), and the run's state is never set but derived, by `runUpdate`.
 */
export function runStateOf(states: readonly DeviceRunState[]): TestRunState {
  return runStateFrom({ unfinished: !states.every(isFinal), started: !states.every(isUnstarted) });
}

/** States a device run is created in: a run none of whose device runs has left them has not started. */
export const UNSTARTED_DEVICE_RUN_STATES: readonly DeviceRunState[] = DEVICE_RUN_MACHINE.initial;

function isUnstarted(state: DeviceRunState): boolean {
  return UNSTARTED_DEVICE_RUN_STATES.includes(state);
}

/**
 * Two facts about a run's current device runs (what the store answers without reading them all):
 * whether any is in UNFINISHED_DEVICE_RUN_STATES, and whether any is not in UNSTARTED_DEVICE_RUN_STATES.
 */
export interface RunProgress {
  readonly unfinished: boolean;
  readonly started: boolean;
}

export function runStateFrom(progress: RunProgress): TestRunState {
  if (!progress.unfinished) return 'FINISHED';
  return progress.started ? 'RUNNING' : 'WAITING';
}

/** What deriving a run's state writes: its state, a start time once, an end time when it finishes. */
export type RunUpdate =
  | { readonly state: Exclude<TestRunState, 'FINISHED'>; readonly startTime?: number }
  | {
      readonly state: 'FINISHED';
      readonly startTime?: number;
      readonly endTime?: number;
      readonly justFinished: boolean;
    };

/**
 * The one way a run's state changes: derived from its device runs' progress, with the start time set
 * the first time it leaves WAITING and kept after, and the end time set when it (first) finishes.
 * null: nothing to write. A finished run is written again: a late result changes its tallies.
 */
export function runUpdate(
  run: Pick<TestRun, 'state' | 'startTime'>,
  progress: RunProgress,
  now: number,
): RunUpdate | null {
  const state = runStateFrom(progress);
  const startTime = state !== 'WAITING' && run.startTime === null ? { startTime: now } : {};
  if (state !== 'FINISHED') return state === run.state && !('startTime' in startTime) ? null : { state, ...startTime };
  const justFinished = run.state !== 'FINISHED';
  return { state, ...startTime, ...(justFinished && { endTime: now }), justFinished };
}

export const RUN_LIST: ListSpec<'id' | 'number' | 'displayName' | 'state' | 'createTime' | 'startTime' | 'endTime'> = {
  entity: 'test runs',
  fields: {
    id: { type: 'number' },
    number: { type: 'number' },
    displayName: { type: 'string' },
    state: { type: 'enum', values: TEST_RUN_STATES },
    createTime: { type: 'date' },
    startTime: { type: 'date' },
    endTime: { type: 'date' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};

export const DEVICE_RUN_LIST: ListSpec<
  'id' | 'state' | 'createTime' | 'startTime' | 'endTime' | 'deviceId' | 'excludeReason'
> = {
  entity: 'device runs',
  fields: {
    id: { type: 'number' },
    state: { type: 'enum', values: DEVICE_RUN_STATES },
    createTime: { type: 'date' },
    startTime: { type: 'date' },
    endTime: { type: 'date' },
    deviceId: { type: 'number' },
    excludeReason: { type: 'enum', values: EXCLUDE_REASONS },
  },
  defaultSort: [{ field: 'id', direction: 'asc' }],
};

/** Characters of a device run's fail reason kept (it may quote the customer's output). */
export const FAIL_REASON_CHARS = 4000;
