// A finished run's result (passed, failed, warning) and a project's pass rate, for every place a
// run appears (docs/api.md#results-at-a-glance).

import { badge, h } from './dom.js';
/** @import { ApiTestRun } from '../client/api-types.ts' */

/** Runs the project list's pass rate looks back over. */
export const PASS_RATE_RUNS = 20;

const LABELS = /** @type {const} */ ({ PASSED: 'Passed', FAILED: 'Failed', WARNING: 'Warning' });

/**
 * A test failure makes a run red; a session that could not finish (warning, timeout, aborted) or
 * a run with nothing run, amber; otherwise green. Until it finishes, a run has only its state.
 * @param {ApiTestRun} run
 * @returns {'PASSED' | 'FAILED' | 'WARNING' | null}
 */
export function runResult(run) {
  if (run.state !== 'FINISHED') return null;
  if (run.failedDeviceCount > 0 || run.failedTestCaseCount > 0) return 'FAILED';
  if (run.warningDeviceCount + run.abortedDeviceCount + run.timeoutedDeviceCount > 0) return 'WARNING';
  return run.succeededDeviceCount > 0 ? 'PASSED' : 'WARNING';
}

/**
 * The run's result with its colour, or its state while it is not finished.
 * @param {ApiTestRun} run
 */
export function resultBadge(run) {
  const result = runResult(run);
  if (result === null) return badge(run.state);
  return h('span', { class: `state state-${result}`, 'data-result': result }, LABELS[result]);
}

/**
 * Share of the finished runs among `runs` (newest first) that passed, over the newest
 * PASS_RATE_RUNS; null without a finished run.
 * @param {readonly ApiTestRun[]} runs
 */
export function passRate(runs) {
  const finished = runs.slice(0, PASS_RATE_RUNS).filter((run) => run.state === 'FINISHED');
  if (finished.length === 0) return null;
  return { passed: finished.filter((run) => runResult(run) === 'PASSED').length, of: finished.length };
}
