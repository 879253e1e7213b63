/**
 * The end of a recorded device session in the executor: the video is finished (ffmpeg's flush)
 * while the other results upload, yet the result is sent only once the video is up, so the
 * session ends with its video (docs/api.md#videos); the steps reach the server in order, those of
 * a short end with the result.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProtocolClient } from '../../src/agent/client.ts';
import type { Driver, Recording } from '../../src/agent/driver.ts';
import { execute } from '../../src/agent/executor.ts';
import type { InputCache } from '../../src/agent/input-cache.ts';
import type { Assignment, ProgressReport, ResultReport } from '../../src/protocol/v1.ts';

const JUNIT = '<testsuite name="t" tests="1"><testcase classname="a.B" name="passes"/></testsuite>';

const assignment: Assignment = {
  deviceRunId: 7,
  deviceId: 1,
  kind: 'server-side',
  timeoutSeconds: 60,
  locale: 'en_US',
  launchApp: false,
  parameters: {},
  credentials: null,
  deviceSettings: null,
  files: [],
  video: true,
};

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** An agent's executor against a recording server; `stopVideo` is how the recording ends. */
function world(stopVideo: (events: string[], dir: string) => Promise<Awaited<ReturnType<Recording['stop']>>>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-executor-video-'));
  dirs.push(dataDir);
  const events: string[] = [];
  const steps: string[] = [];
  const uploaded = new Map<string, Buffer>();
  let junitUploadStarted = () => undefined as void;
  const junitUploading = new Promise<void>((resolve) => (junitUploadStarted = resolve));
  const client = {
    progress: async (_id: number, report: ProgressReport) => {
      steps.push(...report.steps.map((step) => step.type));
      return { abort: false };
    },
    result: async (_id: number, report: ResultReport) => {
      steps.push(...(report.steps ?? []).map((step) => step.type));
      events.push(`result ${report.outcome} with ${(report.steps ?? []).map((step) => step.type).join(' ')}`);
      return {};
    },
    artifact: async (_id: number, file: string, name: string) => {
      events.push(`upload ${name}`);
      if (name === 'junit.xml') junitUploadStarted();
      uploaded.set(name, fs.readFileSync(file));
    },
  } as unknown as ProtocolClient;
  const driver = {
    execute: async (job, context) => {
      context.step('RUNNING');
      const file = path.join(job.workDir, 'junit.xml');
      fs.writeFileSync(file, JUNIT);
      return {
        outcome: 'COMPLETED',
        failReason: null,
        testCases: null,
        exitCode: 0,
        artifacts: [{ kind: 'junit', path: file, name: 'junit.xml' }],
      };
    },
    record: async (_serial, dir) => ({
      stop: async () => {
        events.push('video stopping');
        const outcome = await stopVideo(events, dir);
        // The junit upload may only start while the video is still being finished if it started meanwhile.
        await Promise.race([junitUploading, new Promise((resolve) => setTimeout(resolve, 2000))]);
        events.push('video stopped');
        return outcome;
      },
    }),
  } as Partial<Driver> as Driver;
  const cache: InputCache = { provide: async () => undefined, sweep: async () => undefined };
  const run = () =>
    execute({ client, driver, dataDir, cache, log: () => undefined, reportPatienceMs: 1000 }, 'serial-1', assignment)
      .done;
  return { run, events, steps, uploaded };
}

describe('the end of a recorded device session', () => {
  it('finishes the video while the other results upload, then sends the result, with the steps, once the video is up', async () => {
    const { run, events, steps, uploaded } = world(async (_events, dir) => {
      const file = path.join(dir, 'video.mp4');
      fs.writeFileSync(file, 'the video');
      return { file };
    });
    await run();
    // The junit file went up before the video was finished: the two overlap.
    expect(events.indexOf('upload junit.xml')).toBeGreaterThan(events.indexOf('video stopping'));
    expect(events.indexOf('upload junit.xml')).toBeLessThan(events.indexOf('video stopped'));
    // …and the result waited for the video.
    expect(events.slice(-3)).toEqual([
      'video stopped',
      'upload video.mp4',
      'result SUCCEEDED with RUNNING SENDING_RESULTS PROCESSING_RESULTS',
    ]);
    expect(uploaded.get('video.mp4')?.toString()).toBe('the video');
    expect(steps.slice(-2)).toEqual(['SENDING_RESULTS', 'PROCESSING_RESULTS']);
  });

  it('sends the result without a video when the recording ended without one', async () => {
    const { run, events, uploaded } = world(async () => ({ file: null, reason: 'the device sent no picture' }));
    await run();
    expect(events.at(-1)).toMatch(/^result SUCCEEDED/);
    expect([...uploaded.keys()]).toEqual(['junit.xml']);
  });
});
