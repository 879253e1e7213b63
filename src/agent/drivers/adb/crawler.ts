/**
 * The Android app crawler: installs the app, starts each activity the app exports in turn
 * (`am start -W -n`), lets it settle, takes a screenshot and checks logcat for a crash or ANR of
 * the app; then lets `monkey` send random events to the app, a fixed seed per device run so a
 * crash can be replayed. Each visit and the monkey session is one test case. The crawler does
 * not sign in: filling a login form needs the UI tree (UI Automator), which it does not drive.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestCase } from '../../../domain/test-cases.ts';
import type { Artifact, ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import { readAll } from './device-io.ts';
import { amStartError, parseMonkey } from './device-output.ts';
import type { AppProblem } from './logcat.ts';
import { type AdbDevice, RunSession, infra } from './session.ts';

export interface CrawlerOptions {
  /** How long an activity gets to draw (and to crash) before its screenshot. */
  readonly settleMs: number;
  /** Random events after the activities; 0 skips the monkey. */
  readonly monkeyEvents: number;
  readonly monkeyThrottleMs: number;
}

export const DEFAULT_CRAWLER: CrawlerOptions = { settleMs: 2000, monkeyEvents: 500, monkeyThrottleMs: 100 };

export async function crawl(
  job: Job,
  context: ExecutionContext,
  device: AdbDevice,
  options: CrawlerOptions,
): Promise<ExecutionResult> {
  if (job.app === null || !/\.apk$/i.test(job.app.name)) return infra('the crawler needs an Android app (APK)');
  const appPackage = job.app.properties.package_name;
  if (appPackage === undefined)
    return infra(`${job.app.name} names no package; upload it again so that it is inspected`);
  const declared = job.app.properties.exported_activities || job.app.properties.main_activity || '';
  const activities = declared
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const session = new RunSession(job, context, device);
  const refused = await session.install([job.app], [appPackage]);
  if (refused !== null) return refused;
  try {
    context.step('RUNNING');
    await session.monitor(appPackage);
  } catch (error) {
    return await session.failure(error, 'starting the crawl');
  }

  const log: string[] = [
    `crawling ${appPackage} on ${device.description.displayName}: ${activities.length} exported activities, then ${options.monkeyEvents} monkey events`,
  ];
  if (job.credentials !== null)
    log.push(
      'sign-in credentials were given, but the crawler does not fill in forms: screens behind a sign-in are not reached',
    );
  const testCases: TestCase[] = [];
  const shots: Artifact[] = [];
  const problemsSince = async (mark: number): Promise<AppProblem | null> => {
    // Give the crash report time to reach the log after the app died.
    await sleep(200, undefined, { signal: context.signal }).catch(() => undefined);
    return session.crashes?.since(mark, appPackage)[0] ?? null;
  };
  const record = (
    methodName: string,
    started: number,
    failure: { message: string; stacktrace: string | null } | null,
  ) => {
    testCases.push({
      suiteName: 'Crawler',
      className: appPackage,
      methodName,
      duration: Date.now() - started,
      result: failure === null ? 'PASSED' : 'FAILED',
      errorMessage: failure?.message ?? null,
      stacktrace: failure?.stacktrace ?? null,
    });
    log.push(`${methodName}: ${failure === null ? 'ok' : failure.message}`);
  };

  let problem: string | null = null;
  try {
    for (const activity of activities) {
      if (context.signal.aborted) break;
      const started = Date.now();
      const mark = session.crashes?.mark ?? 0;
      const output = await device.io.shell(['am', 'start', '-W', '-n', `${appPackage}/${activity}`], {
        signal: context.signal,
      });
      const refusedStart = amStartError(output);
      await sleep(options.settleMs, undefined, { signal: context.signal }).catch(() => undefined);
      if (context.signal.aborted) break;
      const shot = await session.screenshot(activity.split('.').pop() ?? activity);
      if (shot !== null) shots.push(shot);
      const crash = await problemsSince(mark);
      record(
        `launch ${activity}`,
        started,
        refusedStart !== null
          ? { message: `the activity could not be started: ${refusedStart}`, stacktrace: null }
          : crash === null
            ? null
            : describe(crash),
      );
    }
    if (options.monkeyEvents > 0 && !context.signal.aborted) {
      const started = Date.now();
      const mark = session.crashes?.mark ?? 0;
      const seed = job.deviceRunId;
      const stream = await device.io.stream(
        [
          'monkey',
          '-p',
          appPackage,
          '-s',
          String(seed),
          '--throttle',
          String(options.monkeyThrottleMs),
          '--pct-syskeys',
          '0',
          '-v',
          String(options.monkeyEvents),
        ],
        context.signal,
      );
      const output = (
        await readAll(
          stream,
          context.signal,
          options.monkeyEvents * (options.monkeyThrottleMs + 200) + 60_000,
          'monkey',
        ).catch(() => Buffer.alloc(0))
      ).toString('utf8');
      fs.writeFileSync(path.join(job.workDir, 'monkey.txt'), output);
      if (!context.signal.aborted) {
        const outcome = parseMonkey(output);
        const shot = await session.screenshot('monkey');
        if (shot !== null) shots.push(shot);
        const crash = await problemsSince(mark);
        const failure =
          crash !== null
            ? describe(crash)
            : outcome.problem !== null
              ? { message: outcome.problem.message, stacktrace: outcome.problem.stacktrace }
              : null;
        record(`monkey ${options.monkeyEvents} events (seed ${seed})`, started, failure);
      }
    }
  } catch (error) {
    if (!context.signal.aborted) problem = (await session.failure(error, 'crawling')).failReason;
  }
  // A monkey cut short by a lost phone looks like a short monkey: ask the phone.
  const lost = !context.signal.aborted && problem === null && (await session.lost());
  await session.forceStop([appPackage]);
  const artifacts = [...shots, ...(await session.finish(false))];
  const logFile = path.join(job.workDir, 'crawler.log');
  fs.writeFileSync(logFile, `${log.join('\n')}\n`);
  artifacts.push({ kind: 'log', path: logFile, name: 'crawler.log' });
  if (fs.existsSync(path.join(job.workDir, 'monkey.txt')))
    artifacts.push({ kind: 'output', path: path.join(job.workDir, 'monkey.txt'), name: 'monkey.txt' });
  if (context.signal.aborted) return { outcome: 'STOPPED', failReason: null, testCases, exitCode: null, artifacts };
  if (problem !== null || lost) return infra(problem ?? 'the phone went away during the crawl', artifacts);
  return {
    outcome: 'COMPLETED',
    failReason: testCases.length === 0 ? 'the app exports no activities to crawl and the monkey was off' : null,
    testCases,
    exitCode: null,
    artifacts,
  };
}

function describe(problem: AppProblem): { message: string; stacktrace: string | null } {
  return {
    message: problem.kind === 'crash' ? `the app crashed: ${problem.message}` : problem.message,
    stacktrace: problem.stacktrace,
  };
}
