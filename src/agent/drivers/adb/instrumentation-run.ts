/**
 * Instrumentation and UI Automator runs: install the app and the test APK, run
 * `am instrument -r -w` and read its status stream as it comes (instrumentation.ts), with a
 * screenshot at each failure and the logcat crash report joined to a test the app's crash took
 * down. Run parameters reach the runner as `-e key value` (AndroidJUnitRunner's arguments, e.g.
 * `class`, `size`, `annotation`).
 */
import type { TestCase } from '../../../domain/test-cases.ts';
import type { Artifact, ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import { parseInstrumentationList } from './device-output.ts';
import { InstrumentationParser, type InstrumentationReport } from './instrumentation.ts';
import { type AdbDevice, RunSession, infra } from './session.ts';

const RUNNER_ARGUMENT = /^[A-Za-z][A-Za-z0-9_.]*$/;

export async function runInstrumentation(
  job: Job,
  context: ExecutionContext,
  device: AdbDevice,
): Promise<ExecutionResult> {
  if (job.tests === null || !/\.apk$/i.test(job.tests.name)) return infra('instrumentation needs a test APK');
  if (job.app !== null && !/\.apk$/i.test(job.app.name)) return infra(`${job.app.name} is not an Android app (APK)`);
  const testPackage = job.tests.properties.package_name;
  if (testPackage === undefined)
    return infra(`${job.tests.name} names no package; upload it again so that it is inspected`);
  const appPackage = job.app?.properties.package_name ?? null;
  const session = new RunSession(job, context, device);

  const refused = await session.install(
    job.app === null ? [job.tests] : [job.app, job.tests],
    [appPackage, testPackage].filter((name): name is string => name !== null),
  );
  if (refused !== null) return refused;

  let runner = job.tests.properties.instrumentation_name ?? null;
  let target = job.tests.properties.target_package_name ?? appPackage;
  try {
    if (runner === null || target === null) {
      const declared = parseInstrumentationList(
        await device.io.shell(['pm', 'list', 'instrumentation'], { signal: context.signal }),
      ).find((each) => each.testPackage === testPackage);
      if (declared === undefined)
        return {
          outcome: 'COMPLETED',
          failReason: `${job.tests.name} declares no instrumentation`,
          testCases: [],
          exitCode: null,
          artifacts: [],
        };
      runner ??= declared.runner;
      target ??= declared.target ?? testPackage;
    }
    context.step('RUNNING');
    await session.monitor(target);
  } catch (error) {
    return await session.failure(error, 'starting the tests');
  }

  const extras = Object.entries(job.parameters)
    .filter(([key]) => RUNNER_ARGUMENT.test(key))
    .flatMap(([key, value]) => ['-e', key, value]);
  const failureShots: Artifact[] = [];
  const parser = new InstrumentationParser();
  let problem: string | null = null;
  try {
    const stream = await device.io.stream(
      ['am', 'instrument', '-r', '-w', ...extras, `${testPackage}/${runner}`],
      context.signal,
    );
    await new Promise<void>((resolve) => {
      const stop = () => stream.destroy();
      context.signal.addEventListener('abort', stop, { once: true });
      let shooting = Promise.resolve();
      stream.on('data', (chunk: Buffer) => {
        for (const failed of parser.push(chunk.toString('utf8')).filter((testCase) => testCase.result === 'FAILED')) {
          // The screen is still the failing test's for a moment; one shot at a time.
          shooting = shooting.then(async () => {
            const shot = await session.screenshot(`failed-${failed.methodName}`);
            if (shot !== null) failureShots.push(shot);
          });
        }
      });
      const done = () => {
        context.signal.removeEventListener('abort', stop);
        void shooting.then(() => resolve());
      };
      stream.once('end', done);
      stream.once('close', done);
      stream.once('error', done);
    });
  } catch (error) {
    if (!context.signal.aborted) problem = (await session.failure(error, 'running the tests')).failReason;
  }
  const lost = !context.signal.aborted && (await session.lost());
  // A stopped or crashed run may leave the instrumentation running in the app's process.
  await session.forceStop([target!, testPackage]);
  const artifacts = [...failureShots, ...(await session.finish(true))];
  const report = parser.end();

  if (context.signal.aborted)
    return { outcome: 'STOPPED', failReason: null, testCases: withoutInterrupted(report), exitCode: null, artifacts };
  if (problem !== null || lost) return infra(problem ?? 'the phone went away during the tests', artifacts);
  return {
    outcome: 'COMPLETED',
    failReason: report.testCases.length === 0 ? report.runFailure : null,
    testCases: withCrashDetails(report, session, target!, testPackage, runner!),
    exitCode: null,
    artifacts,
  };
}

/** The test that was running when the run was stopped did not fail: it was stopped. */
function withoutInterrupted(report: InstrumentationReport): TestCase[] {
  const { interrupted } = report;
  return report.testCases.filter(
    (testCase) =>
      interrupted === null ||
      testCase.result !== 'FAILED' ||
      testCase.className !== interrupted.className ||
      testCase.methodName !== interrupted.methodName,
  );
}

/**
 * The crash logcat saw goes with the test it took down. A run that failed outside any test (a
 * crash between tests, in a class rule) is one more failed case, so that it cannot pass green.
 */
function withCrashDetails(
  report: InstrumentationReport,
  session: RunSession,
  target: string,
  testPackage: string,
  runner: string,
): TestCase[] {
  const crash =
    session.crashes?.problems.find(
      (problem) => problem.packageName === target || problem.packageName === testPackage,
    ) ?? null;
  const cases = report.testCases.map((testCase) =>
    report.interrupted !== null &&
    testCase.className === report.interrupted.className &&
    testCase.methodName === report.interrupted.methodName &&
    crash !== null
      ? {
          ...testCase,
          errorMessage: `the app ${crash.kind === 'anr' ? 'stopped responding' : 'crashed'}: ${crash.message}`,
          stacktrace: crash.stacktrace,
        }
      : testCase,
  );
  if (report.runFailure !== null && cases.length > 0 && !cases.some((testCase) => testCase.result === 'FAILED')) {
    cases.push({
      suiteName: 'instrumentation',
      className: `${testPackage}/${runner}`,
      methodName: 'run',
      duration: 0,
      result: 'FAILED',
      errorMessage: report.runFailure,
      stacktrace: crash?.stacktrace ?? null,
    });
  }
  return cases;
}
