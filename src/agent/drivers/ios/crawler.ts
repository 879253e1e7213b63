/**
 * The iOS crawler (IOS_CRAWLER): launches the installed app and explores it through its
 * accessibility tree, the way a curious user would. On every screen it has not seen before it takes
 * a screenshot (one test case a screen); then it taps the next thing on the screen it has not tapped
 * yet, top to bottom, and the way back last. When the app leaves the front it looks for a new crash
 * report of the app: a crash is a failed test case with the report attached, a left app (a link to
 * Safari, say) is brought back. With the run's credentials it signs in whenever a screen is a
 * sign-in form (first, and again after a crash logged it out). It stops when every screen's
 * elements were tried, at a budget of taps and screens, or on abort.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestCase } from '../../../domain/test-cases.ts';
import type { Artifact, ExecutionResult, Job } from '../../driver.ts';
import type { CrashWatch } from './capture.ts';
import {
  backButton,
  centerOf,
  describeElement,
  elementKey,
  screenSignature,
  screenTitle,
  signInForm,
  tappables,
} from './ui-tree.ts';
import type { UiAutomation, UiSession } from './wda.ts';

export interface CrawlLimits {
  readonly maxTaps: number;
  readonly maxScreens: number;
  /** How long the app gets to settle after a tap. */
  readonly settleMs: number;
}

export const DEFAULT_CRAWL_LIMITS: CrawlLimits = { maxTaps: 60, maxScreens: 25, settleMs: 800 };

export interface CrawlTarget {
  readonly udid: string;
  readonly bundleId: string;
  readonly crashes: CrashWatch;
}

export async function crawl(
  job: Job,
  signal: AbortSignal,
  automation: UiAutomation,
  target: CrawlTarget,
  limits: CrawlLimits,
): Promise<ExecutionResult> {
  const shots = path.join(job.workDir, 'screenshots');
  fs.mkdirSync(shots, { recursive: true });
  const testCases: TestCase[] = [];
  const artifacts: Artifact[] = [];
  const log: string[] = [`crawling ${target.bundleId}`];
  const logFile = path.join(job.workDir, 'logs', 'crawler.log');
  const finish = (failReason: string | null): ExecutionResult => {
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    fs.writeFileSync(logFile, `${log.join('\n')}\n`);
    return {
      outcome: signal.aborted ? 'STOPPED' : 'COMPLETED',
      failReason,
      testCases,
      exitCode: null,
      artifacts: [...artifacts, { kind: 'log', path: logFile, name: 'crawler.log' }],
    };
  };
  const record = (
    methodName: string,
    started: number,
    result: TestCase['result'],
    errorMessage: string | null = null,
  ) => {
    testCases.push({
      suiteName: 'Crawler',
      className: target.bundleId,
      methodName,
      duration: Date.now() - started,
      result,
      errorMessage,
      stacktrace: null,
    });
    log.push(`${methodName}: ${result}${errorMessage === null ? '' : ` (${errorMessage})`}`);
  };

  let session: UiSession;
  const launched = Date.now();
  try {
    session = await automation.open(target.udid, target.bundleId, signal);
  } catch (error) {
    if (signal.aborted) return finish(null);
    const crash = await target.crashes.collect();
    if (crash.names.length > 0) {
      artifacts.push(...crash.artifacts);
      record('launch', launched, 'FAILED', `the app crashed at launch (${crash.names.join(', ')})`);
      return finish(null);
    }
    return {
      outcome: 'INFRA_ERROR',
      failReason: `the crawler could not drive the device: ${(error as Error).message}`,
      testCases,
      exitCode: null,
      artifacts,
    };
  }

  const seen = new Set<string>();
  const tapped = new Set<string>();
  const shoot = async (label: string) => {
    const file = path.join(
      shots,
      `${String(artifacts.filter((artifact) => artifact.kind === 'screenshot').length + 1).padStart(2, '0')}-${label.replace(/[^A-Za-z0-9]+/g, '_').slice(0, 40)}.png`,
    );
    await session.screenshot(file);
    artifacts.push({ kind: 'screenshot', path: file, name: path.basename(file) });
  };
  let lastAction = 'launching it';
  let actionStarted = launched;
  let taps = 0;
  let signIns = 0;
  let firstScreen = true;
  try {
    while (!signal.aborted && seen.size < limits.maxScreens) {
      const front = await session.foregroundApp();
      if (front !== target.bundleId) {
        const crash = await target.crashes.collect();
        if (crash.names.length > 0) {
          artifacts.push(...crash.artifacts);
          record(
            `crash after ${lastAction}`,
            actionStarted,
            'FAILED',
            `the app crashed after ${lastAction} (${crash.names.join(', ')})`,
          );
        } else
          log.push(`the app left the front after ${lastAction} (${front || 'no app'} is in front); bringing it back`);
        await session.activate(target.bundleId);
        await sleep(limits.settleMs, undefined, { signal });
        if ((await session.foregroundApp()) !== target.bundleId) {
          record('relaunch', Date.now(), 'FAILED', `the app could not be brought back after ${lastAction}`);
          break;
        }
        continue;
      }
      const tree = await session.source();
      // Signing in comes first, and again whenever the app asks (after a crash, say), a few times at most.
      const form = job.credentials === null ? null : signInForm(tree);
      if (form !== null && job.credentials !== null && signIns < 3) {
        const started = Date.now();
        signIns += 1;
        for (const [field, text] of [
          [form.user, job.credentials.username],
          [form.password, job.credentials.password],
        ] as const) {
          await session.tap(centerOf(field).x, centerOf(field).y);
          await session.type(text);
        }
        if (form.submit !== null) await session.tap(centerOf(form.submit).x, centerOf(form.submit).y);
        await sleep(limits.settleMs, undefined, { signal });
        const after = await session.source();
        const stuck = signInForm(after) !== null && screenSignature(after) === screenSignature(tree);
        if (signIns === 1)
          record(
            'sign in',
            started,
            stuck ? 'FAILED' : 'PASSED',
            stuck ? 'the sign-in form was still shown after signing in' : null,
          );
        else log.push(`signed in again${stuck ? ', in vain' : ''}`);
        if (stuck) break;
        lastAction = 'signing in';
        actionStarted = started;
        firstScreen = false;
        continue;
      }
      if (firstScreen && job.credentials !== null)
        record('sign in', Date.now(), 'SKIPPED', 'the first screen has no sign-in form');
      firstScreen = false;
      const signature = screenSignature(tree);
      const title = screenTitle(tree);
      if (!seen.has(signature)) {
        seen.add(signature);
        await shoot(title);
        record(seen.size === 1 ? `launch (${title})` : `screen: ${title}`, actionStarted, 'PASSED');
      }
      // Everything here tried: back to where this screen came from; at the first screen, done.
      const next = tappables(tree).find((node) => !tapped.has(`${signature}#${elementKey(node)}`)) ?? backButton(tree);
      if (next === null || taps >= limits.maxTaps) break;
      tapped.add(`${signature}#${elementKey(next)}`);
      lastAction = `tapping ${describeElement(next)} on "${title}"`;
      actionStarted = Date.now();
      taps += 1;
      log.push(lastAction);
      await session.tap(centerOf(next).x, centerOf(next).y);
      await sleep(limits.settleMs, undefined, { signal });
    }
  } catch (error) {
    if (!signal.aborted) {
      log.push(`stopped: ${(error as Error).message}`);
      await session.close();
      // WDA refuses requests about an app that has just died: a crash, not the device's fault.
      const crash = await target.crashes.collect();
      if (crash.names.length > 0) {
        artifacts.push(...crash.artifacts);
        record(
          `crash after ${lastAction}`,
          actionStarted,
          'FAILED',
          `the app crashed after ${lastAction} (${crash.names.join(', ')})`,
        );
        return finish(null);
      }
      return {
        ...finish(null),
        outcome: 'INFRA_ERROR',
        failReason: `the crawler lost the device: ${(error as Error).message}`,
      };
    }
  }
  await session.close();
  log.push(`${seen.size} screen(s), ${taps} tap(s)`);
  return finish(seen.size === 0 && !signal.aborted ? 'the crawler saw no screen of the app' : null);
}
