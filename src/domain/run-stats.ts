/**
 * A run's counters (device runs per state, test cases per result, the ratios the API shows): they
 * follow from how many of its device runs are in each state, tallied by the store in one grouped
 * query or from device runs already in memory.
 */
import { type DeviceRun, type DeviceRunState, isFinal } from './runs.ts';

/** Per-run aggregates of its device runs, computed by the store in one grouped query. */
export interface RunStats {
  deviceCount: number;
  waitingDeviceCount: number;
  runningDeviceCount: number;
  finishedDeviceCount: number;
  succeededDeviceCount: number;
  failedDeviceCount: number;
  warningDeviceCount: number;
  timeoutedDeviceCount: number;
  abortedDeviceCount: number;
  excludedDeviceCount: number;
  testCaseCount: number;
  successfulTestCaseCount: number;
  failedTestCaseCount: number;
  skippedTestCaseCount: number;
}

export const EMPTY_RUN_STATS: Readonly<RunStats> = {
  deviceCount: 0,
  waitingDeviceCount: 0,
  runningDeviceCount: 0,
  finishedDeviceCount: 0,
  succeededDeviceCount: 0,
  failedDeviceCount: 0,
  warningDeviceCount: 0,
  timeoutedDeviceCount: 0,
  abortedDeviceCount: 0,
  excludedDeviceCount: 0,
  testCaseCount: 0,
  successfulTestCaseCount: 0,
  failedTestCaseCount: 0,
  skippedTestCaseCount: 0,
};

/** How many device runs of a run are in one state, with their test case counts. */
export interface StateTally {
  readonly state: DeviceRunState;
  readonly count: number;
  readonly testCaseAllCount: number;
  readonly testCasePassedCount: number;
  readonly testCaseFailedCount: number;
  readonly testCaseSkippedCount: number;
}

/** The counter each state's device runs add to (FINISHING ones are still running). */
const STATE_COUNTER: Readonly<Record<DeviceRunState, keyof RunStats>> = {
  WAITING: 'waitingDeviceCount',
  RUNNING: 'runningDeviceCount',
  FINISHING: 'runningDeviceCount',
  SUCCEEDED: 'succeededDeviceCount',
  FAILED: 'failedDeviceCount',
  WARNING: 'warningDeviceCount',
  TIMEOUT: 'timeoutedDeviceCount',
  ABORTED: 'abortedDeviceCount',
  EXCLUDED: 'excludedDeviceCount',
};

/** The counters of a run follow from how many of its device runs are in each state. */
export function runStats(tallies: Iterable<StateTally>): RunStats {
  const stats = { ...EMPTY_RUN_STATS };
  for (const tally of tallies) {
    stats.deviceCount += tally.count;
    stats.testCaseCount += tally.testCaseAllCount;
    stats.successfulTestCaseCount += tally.testCasePassedCount;
    stats.failedTestCaseCount += tally.testCaseFailedCount;
    stats.skippedTestCaseCount += tally.testCaseSkippedCount;
    if (isFinal(tally.state)) stats.finishedDeviceCount += tally.count;
    stats[STATE_COUNTER[tally.state]] += tally.count;
  }
  return stats;
}

/** The same tallies from device runs already in memory (the project listing loads them anyway). */
export function talliesOf(deviceRuns: Iterable<DeviceRun>): StateTally[] {
  return [...deviceRuns]
    .filter((run) => !run.superseded)
    .map((run) => ({
      state: run.state,
      count: 1,
      testCaseAllCount: run.testCaseAllCount,
      testCasePassedCount: run.testCasePassedCount,
      testCaseFailedCount: run.testCaseFailedCount,
      testCaseSkippedCount: run.testCaseSkippedCount,
    }));
}

/** Device runs that ended for a reason outside the tests, kept apart from test failures (docs/api.md#device-runs-and-device-sessions). */
export function errorsDeviceCount(stats: RunStats): number {
  return stats.warningDeviceCount + stats.timeoutedDeviceCount;
}

export function executedTestCaseCount(stats: RunStats): number {
  return stats.successfulTestCaseCount + stats.failedTestCaseCount;
}

export function executionRatio(stats: RunStats): number {
  return stats.deviceCount === 0 ? 0 : stats.finishedDeviceCount / stats.deviceCount;
}

export function successRatio(stats: RunStats): number {
  return stats.deviceCount === 0 ? 0 : stats.succeededDeviceCount / stats.deviceCount;
}
