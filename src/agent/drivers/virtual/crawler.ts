/**
 * The virtual crawler (APP_CRAWLER, IOS_CRAWLER): installs the app, then "launches" every activity
 * (Android) or screen (iOS) the app declares, in turn, each visit one test case with a screenshot.
 * A crawl has no test process of its own, so it reports no CPU/memory samples.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { PNG } from 'pngjs';
import type { TestCase } from '../../../domain/test-cases.ts';
import type { Artifact, ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import type { DeviceState } from './device-state.ts';
import type { VirtualDeviceSpec } from './devices.ts';

const VISIT_MS = 250;

export async function crawl(
  job: Job,
  context: ExecutionContext,
  device: VirtualDeviceSpec,
  state: DeviceState,
): Promise<ExecutionResult> {
  if (job.app === null)
    return {
      outcome: 'INFRA_ERROR',
      failReason: 'the crawler needs the app',
      testCases: null,
      exitCode: null,
      artifacts: [],
    };
  const appId = job.app.properties.package_name ?? job.app.properties.bundle_identifier ?? path.basename(job.app.name);
  context.step('INSTALL');
  state.install(job.app.path, appId);
  context.step('RUNNING');
  const declared =
    device.osType === 'ANDROID'
      ? (job.app.properties.activities ?? job.app.properties.main_activity ?? '')
      : (job.app.properties.screens ?? '');
  const screens = declared
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const shots = path.join(job.workDir, 'screenshots');
  fs.mkdirSync(shots, { recursive: true });
  const log: string[] = [`crawling ${appId} on ${device.displayName}`];
  const testCases: TestCase[] = [];
  const artifacts: Artifact[] = [];
  const visit = async (methodName: string, label: string) => {
    const started = Date.now();
    await sleep(VISIT_MS, undefined, { signal: context.signal }).catch(() => undefined);
    if (context.signal.aborted) return;
    const file = path.join(
      shots,
      `${String(testCases.length + 1).padStart(2, '0')}-${label.replace(/[^A-Za-z0-9]+/g, '_')}.png`,
    );
    fs.writeFileSync(file, screenOf(label, device.osType === 'IOS' ? [118, 256] : [108, 240]));
    artifacts.push({ kind: 'screenshot', path: file, name: path.basename(file) });
    testCases.push({
      suiteName: 'Crawler',
      className: appId,
      methodName,
      duration: Date.now() - started,
      result: 'PASSED',
      errorMessage: null,
      stacktrace: null,
    });
    log.push(`${methodName}: ok`);
  };
  if (job.credentials !== null) await visit('sign in', `sign in as ${job.credentials.username}`);
  for (const screen of screens) {
    if (context.signal.aborted) break;
    await visit(`launch ${screen}`, screen.split('.').pop() ?? screen);
  }
  const logFile = path.join(job.workDir, 'crawler.log');
  fs.writeFileSync(logFile, `${log.join('\n')}\n`);
  artifacts.push({ kind: 'log', path: logFile, name: 'crawler.log' });
  return {
    outcome: context.signal.aborted ? 'STOPPED' : 'COMPLETED',
    failReason:
      screens.length === 0
        ? `the app declares no ${device.osType === 'ANDROID' ? 'activities' : 'screens'} to crawl`
        : null,
    testCases,
    exitCode: null,
    artifacts,
  };
}

/** A screen in a colour of its own, with a header bar: different screens look different. */
export function screenOf(label: string, [width, height]: readonly [number, number]): Buffer {
  let hash = 0;
  for (const char of label) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  const colour = [hash & 0xff, (hash >> 8) & 0xff, (hash >> 16) & 0xff].map((c) => 60 + (c % 160));
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (width * y + x) << 2;
      const header = y < height / 10;
      png.data[at] = header ? 250 : colour[0]!;
      png.data[at + 1] = header ? 250 : colour[1]!;
      png.data[at + 2] = header ? 250 : colour[2]!;
      png.data[at + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}
