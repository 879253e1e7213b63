import { describe, expect, it } from 'vitest';
import { errorsDeviceCount, executionRatio, runStats, successRatio } from '../../src/domain/run-stats.ts';
import { type DeviceRunState, runStateOf } from '../../src/domain/runs.ts';

const tally = (state: DeviceRunState, count: number, passed = 0, failed = 0) => ({
  state,
  count,
  testCaseAllCount: passed + failed,
  testCasePassedCount: passed,
  testCaseFailedCount: failed,
  testCaseSkippedCount: 0,
});

describe('run counters', () => {
  it('follow from the device-run states', () => {
    const stats = runStats([
      tally('SUCCEEDED', 2, 10),
      tally('FAILED', 1, 4, 1),
      tally('WARNING', 1),
      tally('TIMEOUT', 1),
      tally('RUNNING', 1),
      tally('EXCLUDED', 2),
    ]);
    expect(stats).toMatchObject({
      deviceCount: 8,
      finishedDeviceCount: 7,
      succeededDeviceCount: 2,
      failedDeviceCount: 1,
      runningDeviceCount: 1,
      excludedDeviceCount: 2,
      testCaseCount: 15,
      successfulTestCaseCount: 14,
      failedTestCaseCount: 1,
    });
    expect(errorsDeviceCount(stats)).toBe(2);
    expect(executionRatio(stats)).toBe(7 / 8);
    expect(successRatio(stats)).toBe(2 / 8);
  });

  it('give the run state', () => {
    expect(runStateOf(['WAITING', 'EXCLUDED'])).toBe('WAITING');
    expect(runStateOf(['WAITING', 'RUNNING'])).toBe('RUNNING');
    expect(runStateOf(['SUCCEEDED', 'WAITING'])).toBe('RUNNING');
    expect(runStateOf(['SUCCEEDED', 'ABORTED', 'EXCLUDED'])).toBe('FINISHED');
  });
});
