/**
 * The cases every driver must pass, whatever the devices behind it: the same suite runs on the
 * virtual driver here and on the adb and iOS drivers against their protocol fakes. A driver
 * supplies jobs for its own kinds of tests through `DriverFixtures`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver, ExecutionContext, Job, PerformanceSample } from '../../src/agent/driver.ts';
import type { StepType } from '../../src/domain/runs.ts';
import { parseJUnit } from '../../src/results/junit.ts';
import { extractZip } from '../../src/files/zip.ts';

export type JobSpec = Pick<Job, 'kind' | 'app' | 'tests'> & Partial<Pick<Job, 'parameters' | 'timeoutSeconds'>>;

export interface DriverFixtures {
  /** Tests that pass, take a second or two, and report through JUnit or directly. */
  passing(): Promise<JobSpec>;
  /** Tests of which one fails. */
  failing(): Promise<JobSpec>;
  /** Tests that never end on their own. */
  endless(): Promise<JobSpec>;
  /** Tests that leave a trace on the device (an app, a file), and tests that fail if any trace is left. */
  leavesTrace(): Promise<JobSpec>;
  expectsClean(): Promise<JobSpec>;
  /** A kind of test this driver cannot run. */
  readonly unsupportedKind: Job['kind'];
}

export interface Recorder {
  readonly context: ExecutionContext;
  readonly steps: StepType[];
  readonly samples: PerformanceSample[];
}

export function recorder(signal: AbortSignal = new AbortController().signal): Recorder {
  const steps: StepType[] = [];
  const samples: PerformanceSample[] = [];
  return {
    steps,
    samples,
    context: {
      signal,
      step: (type) => steps.push(type),
      sample: (sample) => samples.push(sample),
      unzip: async (zipPath, destDir) => {
        await extractZip(zipPath, destDir);
      },
    },
  };
}

/** What ffprobe (from the ffmpeg package) says of a video: its codec, container and seconds. */
export function probeVideo(file: string): { codec: string; format: string; duration: number } {
  const out = execFileSync(
    'ffprobe',
    [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=codec_name:format=format_name,duration',
      '-of',
      'json',
      file,
    ],
    { encoding: 'utf8' },
  );
  const json = JSON.parse(out) as {
    streams: { codec_name: string }[];
    format: { format_name: string; duration: string };
  };
  return {
    codec: json.streams[0]!.codec_name,
    format: json.format.format_name,
    duration: Number(json.format.duration),
  };
}

export function describeDriverConformance(
  name: string,
  setup: () => Promise<{ driver: Driver; fixtures: DriverFixtures; cleanup(): Promise<void> }>,
): void {
  describe(`driver conformance: ${name}`, () => {
    let driver: Driver;
    let fixtures: DriverFixtures;
    let cleanup: () => Promise<void>;
    let serial: string;
    const workRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-conformance-'));
    let jobs = 0;

    beforeAll(async () => {
      ({ driver, fixtures, cleanup } = await setup());
      serial = (await driver.listDevices())[0]!.serial;
    });
    afterAll(async () => {
      await driver.close();
      await cleanup();
      fs.rmSync(workRoot, { recursive: true, force: true });
    });

    const job = (spec: JobSpec): Job => {
      jobs += 1;
      const workDir = path.join(workRoot, String(jobs));
      fs.mkdirSync(workDir, { recursive: true });
      return {
        deviceRunId: jobs,
        serial,
        data: [],
        parameters: {},
        timeoutSeconds: 60,
        locale: 'en_US',
        deviceSettings: null,
        launchApp: true,
        credentials: null,
        workDir,
        ...spec,
      };
    };
    const testCasesOf = (result: Awaited<ReturnType<Driver['execute']>>) =>
      result.testCases ??
      result.artifacts
        .filter((artifact) => artifact.kind === 'junit')
        .flatMap((artifact) => parseJUnit(fs.readFileSync(artifact.path, 'utf8')));

    it('lists its devices with what the server needs, under stable serials', async () => {
      const first = await driver.listDevices();
      const second = await driver.listDevices();
      expect(first.length).toBeGreaterThan(0);
      expect(second.map((device) => device.serial)).toEqual(first.map((device) => device.serial));
      for (const device of first) {
        expect(device).toMatchObject({
          serial: expect.any(String),
          displayName: expect.any(String),
          manufacturer: expect.any(String),
          releaseVersion: expect.any(String),
        });
        expect(['ANDROID', 'IOS']).toContain(device.osType);
        expect(device.executionKinds.length).toBeGreaterThan(0);
      }
      expect(await driver.health(serial)).toEqual({ ok: true });
    });

    it('runs passing tests: COMPLETED, steps in order, results, samples, a log', async () => {
      const { context, steps, samples } = recorder();
      const result = await driver.execute(job(await fixtures.passing()), context);
      expect(result.outcome).toBe('COMPLETED');
      const cases = testCasesOf(result);
      expect(cases.length).toBeGreaterThan(0);
      expect(cases.every((testCase) => testCase.result === 'PASSED')).toBe(true);
      const order = ['PREPARING', 'INSTALL', 'RUNNING'];
      expect(steps.filter((step) => order.includes(step))).toEqual(order);
      expect(samples.length).toBeGreaterThan(0);
      expect(samples[0]).toMatchObject({ timestamp: expect.any(Number), cpuUsage: expect.any(Number) });
      // Memory is a figure where the device reports one, else null: never a made-up zero.
      expect(samples.every((sample) => sample.memUsage === null || sample.memUsage > 0)).toBe(true);
      expect(result.artifacts.some((artifact) => artifact.kind === 'log')).toBe(true);
      for (const artifact of result.artifacts) expect(fs.existsSync(artifact.path)).toBe(true);
      expect((await driver.clean(serial)).ok).toBe(true);
    });

    it('runs failing tests: COMPLETED, with the failure and its message', async () => {
      const { context } = recorder();
      const result = await driver.execute(job(await fixtures.failing()), context);
      expect(result.outcome).toBe('COMPLETED');
      const failed = testCasesOf(result).filter((testCase) => testCase.result === 'FAILED');
      expect(failed).toHaveLength(1);
      expect(failed[0]!.errorMessage).toBeTruthy();
      expect((await driver.clean(serial)).ok).toBe(true);
    });

    it('refuses a kind of test it cannot run, as an infrastructure error', async () => {
      const { context } = recorder();
      const spec = await fixtures.passing();
      const result = await driver.execute(job({ ...spec, kind: fixtures.unsupportedKind }), context);
      expect(result.outcome).toBe('INFRA_ERROR');
      expect(result.failReason).toBeTruthy();
    });

    it('stops promptly when aborted, keeping what it has', async () => {
      const controller = new AbortController();
      const { context, steps, samples } = recorder(controller.signal);
      const running = driver.execute(job(await fixtures.endless()), context);
      // Aborted while its tests run and are recorded (their first sample is in), not while
      // installing (which takes a while on a real phone).
      let ended = false;
      void running.finally(() => (ended = true));
      while (!steps.includes('RUNNING') || samples.length === 0) {
        if (ended) throw new Error(`the endless tests ended before running: ${JSON.stringify(await running)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const started = Date.now();
      controller.abort();
      const result = await running;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(result.outcome).toBe('STOPPED');
      // What was recorded up to the abort is kept: the log at least.
      expect(
        result.artifacts.some((artifact) => artifact.kind === 'log'),
        JSON.stringify(result.artifacts),
      ).toBe(true);
      for (const artifact of result.artifacts) expect(fs.existsSync(artifact.path)).toBe(true);
      expect((await driver.clean(serial)).ok).toBe(true);
    });

    it('records the screen of a whole session into a video Chromium plays (H.264 in MP4)', async () => {
      expect(driver.missingTools()).toEqual([]);
      const dir = fs.mkdtempSync(path.join(workRoot, 'video-'));
      const recording = await driver.record(serial, dir);
      const result = await driver.execute(job(await fixtures.passing()), recorder().context);
      expect(result.outcome).toBe('COMPLETED');
      const video = await recording.stop();
      expect(video.file, video.file === null ? video.reason : '').not.toBeNull();
      expect(path.dirname(video.file!)).toBe(dir);
      const probe = probeVideo(video.file!);
      expect(probe).toMatchObject({ codec: 'h264', format: expect.stringContaining('mp4') });
      expect(probe.duration).toBeGreaterThan(0);
      expect((await driver.clean(serial)).ok).toBe(true);
    });

    it('cleans a device so that the next run sees nothing of the previous one', async () => {
      const traced = await driver.execute(job(await fixtures.leavesTrace()), recorder().context);
      expect(traced.outcome).toBe('COMPLETED');
      const report = await driver.clean(serial);
      expect(report.ok, report.report).toBe(true);
      const check = await driver.execute(job(await fixtures.expectsClean()), recorder().context);
      expect(check.outcome).toBe('COMPLETED');
      expect(
        testCasesOf(check).every((testCase) => testCase.result === 'PASSED'),
        JSON.stringify(testCasesOf(check)),
      ).toBe(true);
      expect((await driver.clean(serial)).ok).toBe(true);
    });
  });
}
