import { describe, expect, it } from 'vitest';
import type { ExecutionResult } from '../../src/agent/driver.ts';
import { decide } from '../../src/agent/executor.ts';
import type { TestCase } from '../../src/domain/test-cases.ts';

const passed: TestCase = {
  suiteName: null,
  className: 'A',
  methodName: 'ok',
  duration: 1,
  result: 'PASSED',
  errorMessage: null,
  stacktrace: null,
};
const failed: TestCase = { ...passed, methodName: 'bad', result: 'FAILED', errorMessage: 'no' };
/** A driver with no devices of its own whose device runs do what `execute` says. */
const scriptedDriver = <E>(execute: E) => ({
  name: 'scripted',
  listDevices: async () => [],
  health: async () => ({ ok: true as const }),
  clean: async () => ({ ok: true, report: 'clean' }),
  close: async () => undefined,
  execute,
});
const completed = (exitCode: number | null): ExecutionResult => ({
  outcome: 'COMPLETED',
  failReason: null,
  testCases: null,
  exitCode,
  artifacts: [],
});

describe('the outcome of a device run', () => {
  it('keeps test failures and infrastructure failures apart', () => {
    expect(decide(completed(0), { cases: [passed], problem: null }, null).outcome).toBe('SUCCEEDED');
    expect(decide(completed(1), { cases: [passed, failed], problem: null }, null).outcome).toBe('FAILED');
    expect(
      decide(
        { ...completed(null), outcome: 'INFRA_ERROR', failReason: 'install failed' },
        { cases: [], problem: null },
        null,
      ),
    ).toMatchObject({ outcome: 'WARNING', failReason: 'install failed' });
    expect(
      decide(
        { ...completed(null), outcome: 'INFRA_ERROR', failReason: 'install failed' },
        { cases: [], problem: null },
        null,
      ).refused,
    ).toBeUndefined();
    // What the device refused to do for the run is a WARNING too, marked so that it is held against neither the device nor retried.
    expect(
      decide(
        { ...completed(null), outcome: 'REFUSED', failReason: 'wrong password' },
        { cases: [], problem: null },
        null,
      ),
    ).toMatchObject({ outcome: 'WARNING', failReason: 'wrong password', refused: true });
    // What the customer's package caused is FAILED for its user, marked the same way: never the device's failure.
    expect(
      decide(
        { ...completed(null), outcome: 'CUSTOMER_FAULT', failReason: 'the test package has no run-tests.sh' },
        { cases: [], problem: null },
        null,
      ),
    ).toMatchObject({ outcome: 'FAILED', failReason: 'the test package has no run-tests.sh', refused: true });
  });

  it('says so when tests report nothing or exit badly despite passing', () => {
    expect(decide(completed(3), { cases: [], problem: null }, null)).toMatchObject({
      outcome: 'FAILED',
      failReason: expect.stringContaining('exited with code 3 and reported no results'),
    });
    expect(decide(completed(2), { cases: [passed], problem: null }, null)).toMatchObject({
      outcome: 'FAILED',
      failReason: expect.stringContaining('exited with code 2'),
    });
    expect(decide(completed(0), { cases: [passed], problem: 'unreadable JUnit results' }, null).outcome).toBe('FAILED');
  });

  it('ends stopped runs as the stop says, keeping partial results', () => {
    const stopped: ExecutionResult = { ...completed(null), outcome: 'STOPPED' };
    expect(decide(stopped, { cases: [passed], problem: null }, 'timeout')).toMatchObject({
      outcome: 'TIMEOUT',
      testCases: [passed],
    });
    expect(decide(stopped, { cases: [], problem: null }, 'aborted').outcome).toBe('ABORTED');
    expect(decide(stopped, { cases: [], problem: null }, 'shutdown').outcome).toBe('WARNING');
  });
});

describe('progress reports of a device run', () => {
  it('sends one at a time, in order, so that the server (which drops older ones) keeps every sample', async () => {
    const { execute } = await import('../../src/agent/executor.ts');
    const os = await import('node:os');
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-executor-'));
    let inFlight = 0;
    let mostInFlight = 0;
    const seqs: number[] = [];
    const samples: number[] = [];
    let firstReport!: () => void;
    const reported = new Promise<void>((resolve) => (firstReport = resolve));
    const client = {
      async progress(_id: number, report: { seq: number; samples: Array<{ timestamp: number }> }) {
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        seqs.push(report.seq);
        if (seqs.length === 1) firstReport();
        samples.push(...report.samples.map((sample) => sample.timestamp));
        await new Promise((resolve) => setTimeout(resolve, seqs.length === 1 ? 400 : 10)); // the first answer is slow
        inFlight -= 1;
        return { abort: false };
      },
      // The last samples may go with the result: it too comes after every report, never beside one.
      async result(_id: number, report: { seq: number; samples?: Array<{ timestamp: number }> }) {
        mostInFlight = Math.max(mostInFlight, inFlight + 1);
        seqs.push(report.seq);
        samples.push(...(report.samples ?? []).map((sample) => sample.timestamp));
        return { state: 'SUCCEEDED' };
      },
      artifact: async () => undefined,
      download: async () => undefined,
    };
    const driver = scriptedDriver(
      async (
        _job: unknown,
        context: {
          sample(sample: { timestamp: number; cpuUsage: number; memUsage: number; packageName: string | null }): void;
        },
      ) => {
        context.sample({ timestamp: 1, cpuUsage: 0.1, memUsage: 1, packageName: null });
        await reported; // the periodic report goes out meanwhile (its answer is slow)
        context.sample({ timestamp: 2, cpuUsage: 0.1, memUsage: 1, packageName: null });
        return { outcome: 'COMPLETED' as const, failReason: null, testCases: [passed], exitCode: 0, artifacts: [] };
      },
    );
    const assignment = {
      deviceRunId: 7,
      deviceId: 1,
      kind: 'server-side' as const,
      timeoutSeconds: 60,
      locale: 'en_US',
      launchApp: true,
      parameters: {},
      credentials: null,
      deviceSettings: null,
      files: [],
    };
    try {
      const { inputCache } = await import('../../src/agent/input-cache.ts');
      const cache = inputCache({
        dir: path.join(dataDir, 'cache'),
        maxBytes: 1024 ** 2,
        retentionMs: () => 60_000,
        log: () => undefined,
      });
      await execute(
        {
          client: client as never,
          driver: driver as never,
          dataDir,
          cache,
          log: () => undefined,
          reportPatienceMs: 1000,
        },
        'serial-1',
        assignment,
      ).done;
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(mostInFlight).toBe(1);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(samples).toEqual([1, 2]);
  });
});

describe('a result the server refuses', () => {
  it("is reported again without its test cases, with the server's reason, rather than dropped (which the lease would hold against the device)", async () => {
    const { execute } = await import('../../src/agent/executor.ts');
    const { ProtocolError } = await import('../../src/agent/client.ts');
    const { inputCache } = await import('../../src/agent/input-cache.ts');
    const os = await import('node:os');
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-executor-'));
    const sent: Array<{ outcome: string; failReason: string | null; testCases: unknown[]; seq: number }> = [];
    const client = {
      progress: async () => ({ abort: false }),
      async result(
        _id: number,
        report: { outcome: string; failReason: string | null; testCases: unknown[]; seq: number },
      ) {
        sent.push(report);
        if (sent.length === 1)
          throw new ProtocolError(
            400,
            'POST /result: 400 body/testCases/0/methodName must NOT have more than 1000 characters',
          );
        return { state: report.outcome };
      },
      artifact: async () => undefined,
      download: async () => undefined,
    };
    const driver = scriptedDriver(async () => ({
      outcome: 'COMPLETED' as const,
      failReason: null,
      testCases: [passed],
      exitCode: 0,
      artifacts: [],
    }));
    const assignment = {
      deviceRunId: 8,
      deviceId: 1,
      kind: 'server-side' as const,
      timeoutSeconds: 60,
      locale: 'en_US',
      launchApp: true,
      parameters: {},
      credentials: null,
      deviceSettings: null,
      files: [],
    };
    try {
      const cache = inputCache({
        dir: path.join(dataDir, 'cache'),
        maxBytes: 1024 ** 2,
        retentionMs: () => 60_000,
        log: () => undefined,
      });
      await execute(
        {
          client: client as never,
          driver: driver as never,
          dataDir,
          cache,
          log: () => undefined,
          reportPatienceMs: 1000,
        },
        'serial-1',
        assignment,
      ).done;
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    expect(sent.map((report) => [report.outcome, report.testCases.length])).toEqual([
      ['SUCCEEDED', 1],
      ['FAILED', 0],
    ]);
    expect(sent[1]!.seq).toBeGreaterThan(sent[0]!.seq);
    expect(sent[1]!.failReason).toContain('the results could not be reported: POST /result: 400');
  });
});
