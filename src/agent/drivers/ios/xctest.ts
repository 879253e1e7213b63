/**
 * Runs XCTest and XCUITest bundles with `ios runtest` and reads their results from go-ios' log
 * (go-ios-output.ts): pass, failure with message and file:line, skip, and tests that never finished
 * because the app or the runner died, which the run's new crash reports explain. XCUITest runs the
 * uploaded runner app against the app; XCTest runs the app itself as the runner, with the bundle in
 * its PlugIns (`--xctest`). Run parameters reach the tests as environment variables (`--env`).
 * XCTest's attachments land in the TMPDIR go-ios runs with; screenshots among them are kept.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ENV_NAME } from '../../../domain/values.ts';
import type { Artifact, ExecutionContext, ExecutionResult, Job, LocalFile } from '../../driver.ts';
import { type Bundle, findXctest, injectXctest } from './bundle.ts';
import type { CrashWatch } from './capture.ts';
import { type GoIos, udidArg } from './go-ios.ts';
import { type LogLine, type TestAttachment, testRunFailureOf, testRunOf } from './go-ios-output.ts';
import { Refusal, unpackBuild } from './install.ts';

export interface TestPlan {
  readonly appBundleId: string;
  readonly runnerBundleId: string;
  /** The XCTest bundle's folder name in the runner's PlugIns, e.g. SampleUITests.xctest. */
  readonly xctestConfig: string;
  /** XCTest: the app hosts the bundle and is its own runner. */
  readonly hostedByApp: boolean;
}

/**
 * What to run, getting the bundles ready: XCTest's bundle goes into the app's PlugIns (before the
 * app is signed); XCUITest's runner is unpacked and checked like the app, its first *UITests.xctest
 * is the bundle. Answers the runner to sign and install besides the app, if any.
 */
export async function planTests(
  job: Job,
  tests: LocalFile,
  app: Bundle,
  context: ExecutionContext,
): Promise<{ plan: TestPlan; runner: Bundle | null }> {
  if (job.kind === 'xctest') {
    const testsDir = path.join(job.workDir, 'tests');
    fs.mkdirSync(testsDir, { recursive: true });
    await context.unzip(tests.path, testsDir).catch((error: Error) => {
      throw new Refusal(`${tests.name} could not be unpacked: ${error.message}`);
    });
    const xctest = findXctest(testsDir);
    if (xctest === null) throw new Refusal(`${tests.name} holds no .xctest bundle`);
    injectXctest(app.dir, xctest);
    return {
      plan: {
        appBundleId: app.bundleId,
        runnerBundleId: app.bundleId,
        xctestConfig: path.basename(xctest),
        hostedByApp: true,
      },
      runner: null,
    };
  }
  const runner = await unpackBuild(tests, path.join(job.workDir, 'runner'), context);
  const config = runner.xctests.find((name) => /UITests?\.xctest$/.test(name)) ?? runner.xctests[0];
  if (config === undefined) throw new Refusal(`${tests.name}: the runner app has no .xctest bundle in its PlugIns`);
  return {
    plan: { appBundleId: app.bundleId, runnerBundleId: runner.bundleId, xctestConfig: config, hostedByApp: false },
    runner,
  };
}

const IMAGE_TYPES: Readonly<Record<string, string>> = { 'public.png': '.png', 'public.jpeg': '.jpg' };

export async function runTests(
  goIos: GoIos,
  udid: string,
  job: Job,
  signal: AbortSignal,
  plan: TestPlan,
  crashes: CrashWatch,
): Promise<ExecutionResult> {
  const logs = path.join(job.workDir, 'logs');
  const attachmentsDir = path.join(job.workDir, 'attachments');
  for (const dir of [logs, attachmentsDir]) fs.mkdirSync(dir, { recursive: true });
  const testLog = path.join(logs, 'xctest.log');
  const goIosLog = fs.createWriteStream(path.join(logs, 'go-ios.log'));
  // go-ios splits --env at every '=', so a value holding one would arrive cut: such parameters are left out.
  const envArgs = Object.entries(job.parameters)
    .filter(([key, value]) => ENV_NAME.test(key) && !value.includes('='))
    .map(([key, value]) => `--env=${key}=${value}`);
  const args = [
    'runtest',
    `--bundle-id=${plan.appBundleId}`,
    `--test-runner-bundle-id=${plan.runnerBundleId}`,
    `--xctest-config=${plan.xctestConfig}`,
    ...(plan.hostedByApp ? ['--xctest'] : []),
    `--log-output=${testLog}`,
    ...envArgs,
    udidArg(udid),
  ];
  const lines: LogLine[] = [];
  const run = goIos.start(args, {
    signal,
    env: { TMPDIR: attachmentsDir },
    onLogLine: (line) => {
      lines.push(line);
      goIosLog.write(
        `${line.level} ${line.msg}${Object.keys(line.attrs).length > 0 && line.msg !== 'test results' ? ` ${JSON.stringify(line.attrs)}` : ''}\n`,
      );
    },
  });
  await run.exited;
  await new Promise<void>((resolve) => goIosLog.end(resolve));

  const artifacts: Artifact[] = [{ kind: 'log', path: path.join(logs, 'go-ios.log'), name: 'go-ios.log' }];
  if (fs.existsSync(testLog)) artifacts.push({ kind: 'log', path: testLog, name: 'xctest.log' });
  const results = testRunOf(lines);
  if (results !== null) artifacts.push(...keepAttachments(results.attachments, job.workDir));
  if (signal.aborted)
    return { outcome: 'STOPPED', failReason: null, testCases: results?.testCases ?? [], exitCode: null, artifacts };

  const crash = await crashes.collect();
  artifacts.push(...crash.artifacts);
  const crashNote = crash.names.length > 0 ? `; the app crashed (${crash.names.join(', ')})` : '';
  const failure = testRunFailureOf(lines);
  if (results === null || (results.testCases.length === 0 && failure !== null)) {
    const reason = failure ?? 'go-ios reported no test results';
    if (crash.names.length > 0)
      return {
        outcome: 'COMPLETED',
        failReason: `no test results: ${reason}${crashNote}`,
        testCases: [],
        exitCode: null,
        artifacts,
      };
    return {
      outcome: 'INFRA_ERROR',
      failReason: `the tests could not be run: ${reason}`,
      testCases: null,
      exitCode: null,
      artifacts,
    };
  }
  const testCases = results.testCases.map((testCase) =>
    testCase.result === 'FAILED' && crashNote !== '' && testCase.stacktrace === null
      ? { ...testCase, errorMessage: `${testCase.errorMessage ?? 'failed'}${crashNote}` }
      : testCase,
  );
  return {
    outcome: 'COMPLETED',
    failReason: testCases.length === 0 ? `the test bundle ${plan.xctestConfig} ran no tests${crashNote}` : null,
    testCases,
    exitCode: null,
    artifacts,
  };
}

/** Screenshots and other attachments go-ios saved for the tests, copied into the work dir. */
function keepAttachments(attachments: readonly TestAttachment[], workDir: string): Artifact[] {
  const dir = path.join(workDir, 'screenshots');
  const kept: Artifact[] = [];
  attachments.forEach((attachment, index) => {
    if (!fs.existsSync(attachment.path)) return;
    const extension = IMAGE_TYPES[attachment.uniformTypeIdentifier];
    const base = `${String(index + 1).padStart(2, '0')}-${(attachment.name || 'attachment').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60)}`;
    fs.mkdirSync(dir, { recursive: true });
    const target = path.join(dir, extension === undefined || base.endsWith(extension) ? base : `${base}${extension}`);
    fs.copyFileSync(attachment.path, target);
    kept.push({ kind: extension === undefined ? 'output' : 'screenshot', path: target, name: path.basename(target) });
  });
  return kept;
}
