/**
 * What `devicecloud run` leaves for CI: each device session's JUnit, log, screenshots and
 * performance samples under `--results DIR`, one merged JUnit file (`--junit FILE`) for the CI's
 * test report, and the failing tests named in the output.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DevicecloudClient } from '../client/api-client.ts';
import type { ApiDeviceSession, ApiTestCaseRun, ApiTestRun } from '../client/api-types.ts';
import type { TestCase } from '../domain/test-cases.ts';
import { junitSuites } from '../results/junit-report.ts';

export interface SessionResults {
  readonly session: ApiDeviceSession;
  readonly testCases: ApiTestCaseRun[];
}

export async function collectTestCases(
  client: DevicecloudClient,
  sessions: readonly ApiDeviceSession[],
): Promise<SessionResults[]> {
  return Promise.all(
    sessions.map(async (session) => ({
      session,
      testCases: session.state === 'EXCLUDED' ? [] : await client.testCaseRuns(session.id),
    })),
  );
}

/** A folder name for a device session: its id and device, safe on every file system. */
function folderOf(session: ApiDeviceSession): string {
  return `${session.id}-${session.device.displayName.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-|-$/g, '')}`;
}

export async function downloadResults(
  client: DevicecloudClient,
  run: ApiTestRun,
  results: readonly SessionResults[],
  dir: string,
): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
  const written: string[] = [];
  for (const { session } of results) {
    if (session.state === 'EXCLUDED') continue;
    const folder = path.join(dir, folderOf(session));
    fs.mkdirSync(path.join(folder, 'screenshots'), { recursive: true });
    fs.writeFileSync(path.join(folder, 'junit.xml'), await client.junit(session.id));
    fs.writeFileSync(path.join(folder, 'test.log'), await client.logs(session.id));
    fs.writeFileSync(
      path.join(folder, 'performance.json'),
      `${JSON.stringify(await client.performance(session.id), null, 2)}\n`,
    );
    const used = new Set<string>();
    for (const shot of await client.screenshots(session.id)) {
      let name = path.basename(shot.originalName).replace(/[^A-Za-z0-9._-]+/g, '_') || `${shot.id}.png`;
      if (used.has(name)) name = `${shot.id}-${name}`;
      used.add(name);
      await client.downloadScreenshot(session.id, shot.id, path.join(folder, 'screenshots', name));
    }
    written.push(folder);
  }
  return written;
}

export function mergedJUnit(run: ApiTestRun, results: readonly SessionResults[]): string {
  return junitSuites(
    `${run.projectName} ${run.displayName}`,
    results
      .filter(({ session }) => session.state !== 'EXCLUDED')
      .map(({ session, testCases }) => ({
        name: session.device.displayName,
        timestamp: session.startTime,
        testCases: testCases.map(toTestCase),
      })),
  );
}

function toTestCase(run: ApiTestCaseRun): TestCase {
  return {
    suiteName: run.suiteName,
    className: run.className,
    methodName: run.methodName,
    duration: run.duration,
    result: run.result,
    errorMessage: run.errorMessage || null,
    stacktrace: run.stacktrace || null,
  };
}

/** "FAILED com.example.LoginTest#testBadPassword on Pixel 8: expected …" lines. */
export function failureLines(results: readonly SessionResults[]): string[] {
  return results.flatMap(({ session, testCases }) =>
    testCases
      .filter((testCase) => testCase.result === 'FAILED')
      .map(
        (testCase) =>
          `FAILED ${testCase.className}#${testCase.methodName} on ${session.device.displayName}${testCase.errorMessage ? `: ${testCase.errorMessage.split('\n')[0]}` : ''}`,
      ),
  );
}
