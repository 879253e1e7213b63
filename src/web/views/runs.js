// One run, live: its counters, why it waits and where it stands in the queue, and its device
// sessions; abort and retry.

import { api } from '../api.js';
import { badge, duration, h, percent, statusLine, table, time } from '../dom.js';
import { FINAL_DEVICE_SESSION_STATES } from '../final-states.js';
import { resultBadge } from '../run-result.js';
import { livePage, reload } from '../page.js';
/** @import { ApiDevice, ApiDeviceRun, ApiDeviceSession, ApiList, ApiTestRun } from '../../client/api-types.ts' */

/** @param {string} runId */
export function runView(runId) {
  const status = statusLine();
  /**
   * @param {ApiTestRun} run
   * @param {'abort' | 'retry'} action
   * @param {string} [question] asked first
   * @param {() => object} [body] what to send, read when clicked
   */
  const act = (run, action, question, body) => async () => {
    if (question && !confirm(question)) return;
    try {
      await api('POST', `/api/v2/runs/${run.id}/${action}`, body?.());
      reload();
    } catch (error) {
      status.fail(error);
    }
  };
  return livePage('Run', async () => {
    /** @type {[ApiTestRun, ApiList<ApiDeviceSession>, ApiList<ApiDeviceRun>]} */
    const [run, sessions, deviceRuns] = await Promise.all([
      api('GET', `/api/v2/runs/${runId}`),
      api('GET', `/api/v2/runs/${runId}/device-sessions?limit=0`),
      api('GET', `/api/v2/runs/${runId}/device-runs?limit=0`),
    ]);
    const stepOf = new Map(
      deviceRuns.data.map((deviceRun) => [deviceRun.id, deviceRun.currentState?.deviceRunStateType]),
    );
    // A retry without ids retries the whole run (as on the established service): name the failed ones.
    // Failed: ended, but neither passed nor left out of the run (EXCLUDED cannot be retried).
    const failed = sessions.data
      .filter(
        (session) =>
          FINAL_DEVICE_SESSION_STATES.includes(session.state) &&
          session.state !== 'SUCCEEDED' &&
          session.state !== 'EXCLUDED',
      )
      .map((session) => session.id);
    const retryable = failed.length > 0;
    const base = `#/projects/${run.projectId}/runs/${run.id}`;
    const live = run.state !== 'FINISHED';
    const view = h(
      'section',
      {},
      h(
        'nav',
        { 'aria-label': 'Breadcrumb', class: 'crumbs' },
        h('a', { href: '#/' }, 'Projects'),
        ' / ',
        h('a', { href: `#/projects/${run.projectId}` }, run.projectName),
      ),
      h('h1', {}, run.displayName, ' ', badge(run.state)),
      run.state === 'FINISHED' ? h('p', { class: 'run-result' }, 'Result: ', resultBadge(run)) : '',
      run.state !== 'FINISHED' && (run.message || run.queuePosition)
        ? h(
            'p',
            { class: 'waiting', 'aria-live': 'polite' },
            run.queuePosition ? h('strong', {}, `Queue position ${run.queuePosition}. `) : '',
            run.message ?? '',
          )
        : '',
      run.state !== 'FINISHED'
        ? h(
            'div',
            { class: 'row' },
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: act(
                  run,
                  'abort',
                  `Abort ${run.displayName}? Device runs in progress stop; what they produced so far is kept.`,
                ),
              },
              'Abort run',
            ),
          )
        : '',
      run.state === 'FINISHED' && retryable
        ? h(
            'div',
            { class: 'row' },
            h(
              'button',
              { type: 'button', onclick: act(run, 'retry', undefined, () => ({ deviceRunIds: failed })) },
              'Retry failed devices',
            ),
          )
        : '',
      status.element,
      h(
        'dl',
        { class: 'facts' },
        fact(
          'Devices',
          h(
            'span',
            {},
            h('progress', {
              max: Math.max(run.deviceCount, 1),
              value: run.finishedDeviceCount,
              'aria-label': 'Devices finished',
            }),
            ` ${run.finishedDeviceCount} of ${run.deviceCount} done`,
            counts([
              ['waiting', run.waitingDeviceCount],
              ['running', run.runningDeviceCount],
              ['succeeded', run.succeededDeviceCount],
              ['failed', run.failedDeviceCount],
              ['warning', run.warningDeviceCount],
              ['timed out', run.timeoutedDeviceCount],
              ['aborted', run.abortedDeviceCount],
              ['excluded', run.excludedDeviceCount],
            ]),
          ),
        ),
        fact(
          'Tests',
          `${run.successfulTestCaseCount} passed, ${run.failedTestCaseCount} failed of ${run.testCaseCount}`,
        ),
        fact('Success', run.deviceCount > 0 ? percent(run.successRatio) : ''),
        fact('Framework', run.frameworkName ?? ''),
        fact('Started by', run.startedByDisplayName ?? ''),
        fact('Created', time(run.createTime)),
        run.startTime ? fact('Started', time(run.startTime)) : '',
        run.endTime ? fact('Ended', time(run.endTime)) : '',
      ),
      h('h2', {}, 'Device sessions'),
      // On a phone: device, state and results; the OS and duration are on the session's page.
      table(
        'Device sessions',
        ['Device', 'OS', 'State', ...(live ? ['Step'] : []), 'Passed', 'Failed', 'Duration'],
        sessions.data.map((session) =>
          h(
            'tr',
            {},
            h(
              'td',
              {},
              h(
                'a',
                { href: `${base}/device-sessions/${session.id}` },
                session.device?.displayName ?? `Device session ${session.id}`,
              ),
            ),
            h('td', {}, osOf(session.device)),
            // A retry replaces the session it retries in this list: say that this row is one.
            h(
              'td',
              {},
              badge(session.state),
              session.excludeReason ? h('span', { class: 'muted' }, ` ${session.excludeReason}`) : '',
              session.retryState && session.retryState !== 'NONE'
                ? h('span', { class: 'muted' }, ` (${session.retryState === 'AUTO' ? 'automatic retry' : 'retry'})`)
                : '',
            ),
            live
              ? h('td', {}, FINAL_DEVICE_SESSION_STATES.includes(session.state) ? '' : (stepOf.get(session.id) ?? ''))
              : '',
            h('td', {}, session.testCasePassedCount),
            h('td', {}, session.testCaseFailedCount),
            h('td', {}, session.startTime ? duration(session.duration) : ''),
          ),
        ),
        { optional: [1, live ? 6 : 5] },
      ),
    );
    return { view, title: `${run.displayName} · ${run.projectName}`, done: run.state === 'FINISHED' };
  });
}

/** @param {ApiDevice | null | undefined} device */
export function osOf(device) {
  if (!device) return '';
  const version = device.softwareVersion;
  const os = device.osType === 'IOS' ? 'iOS' : 'Android';
  return `${os} ${version?.releaseVersion ?? ''}${version?.apiLevel ? ` (API ${version.apiLevel})` : ''}`.trim();
}

/**
 * @param {string} term
 * @param {import('../dom.js').Child} value
 */
function fact(term, value) {
  return h('div', {}, h('dt', {}, term), h('dd', {}, value));
}

/** @param {Array<[string, number]>} pairs */
function counts(pairs) {
  const shown = pairs.filter(([, count]) => count > 0).map(([name, count]) => `${count} ${name}`);
  return shown.length > 0 ? h('span', { class: 'muted' }, ` (${shown.join(', ')})`) : '';
}
