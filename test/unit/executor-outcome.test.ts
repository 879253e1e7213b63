import { describe, expect, it } from 'vitest';
import type { ExecutionResult } from '../../src/agent/driver.ts';
import { decide } from '../../src/agent/executor.ts';
import type { TestCase } from '../../src/domain/test-cases.ts';

const passed: TestCase = { suiteName: null, className: 'A', methodName: 'ok', duration: 1, result: 'PASSED', errorMessage: null, stacktrace: null };
const failed: TestCase = { ...passed, methodName: 'bad', result: 'FAILED', errorMessage: 'no' };
const completed = (exitCode: number | null): ExecutionResult => ({ outcome: 'COMPLETED', failReason: null, testCases: null, exitCode, artifacts: [] });

describe('the outcome of a device run', () => {
  it('keeps test failures and infrastructure failures apart', () => {
    expect(decide(completed(0), { cases: [passed], problem: null }, null).outcome).toBe('SUCCEEDED');
    expect(decide(completed(1), { cases: [passed, failed], problem: null }, null).outcome).toBe('FAILED');
    expect(decide({ ...completed(null), outcome: 'INFRA_ERROR', failReason: 'install failed' }, { cases: [], problem: null }, null)).toMatchObject({ outcome: 'WARNING', failReason: 'install failed' });
  });

  it('says so when tests report nothing or exit badly despite passing', () => {
    expect(decide(completed(3), { cases: [], problem: null }, null)).toMatchObject({ outcome: 'FAILED', failReason: expect.stringContaining('exited with code 3 and reported no results') });
    expect(decide(completed(2), { cases: [passed], problem: null }, null)).toMatchObject({ outcome: 'FAILED', failReason: expect.stringContaining('exited with code 2') });
    expect(decide(completed(0), { cases: [passed], problem: 'unreadable JUnit results' }, null).outcome).toBe('FAILED');
  });

  it('ends stopped runs as the stop says, keeping partial results', () => {
    const stopped: ExecutionResult = { ...completed(null), outcome: 'STOPPED' };
    expect(decide(stopped, { cases: [passed], problem: null }, 'timeout')).toMatchObject({ outcome: 'TIMEOUT', testCases: [passed] });
    expect(decide(stopped, { cases: [], problem: null }, 'aborted').outcome).toBe('ABORTED');
    expect(decide(stopped, { cases: [], problem: null }, 'shutdown').outcome).toBe('WARNING');
  });
});
