// A project's flaky tests with their history (docs/api.md#flaky-tests): each outcome links to
// its session, so a failing one is a click away.

import { badge, h, table, time } from '../dom.js';
/** @import { ApiFlakyTest, ApiList } from '../../client/api-types.ts' */

/**
 * @param {string} projectId
 * @param {ApiList<ApiFlakyTest>} flaky
 */
export function flakyTestsTable(projectId, flaky) {
  return h(
    'section',
    { class: 'flaky-tests' },
    h('h2', {}, 'Flaky tests'),
    h(
      'p',
      { class: 'muted' },
      'Tests that both passed and failed on the same app build, across devices, retries or runs.',
    ),
    table(
      'Flaky tests',
      ['Test', 'Passed / failed', 'Last seen', 'History (newest first)'],
      flaky.data.map((test) =>
        h(
          'tr',
          {},
          h('td', {}, h('strong', {}, test.methodName), h('div', { class: 'muted' }, test.className)),
          h('td', {}, `${test.passedCount} / ${test.failedCount}`),
          h('td', {}, time(test.lastSeenTime)),
          h(
            'td',
            {},
            h(
              'ul',
              { class: 'flaky-history' },
              test.history.map((outcome) =>
                h(
                  'li',
                  {},
                  badge(outcome.result),
                  ' ',
                  h(
                    'a',
                    {
                      href: `#/projects/${projectId}/runs/${outcome.runId}/device-sessions/${outcome.deviceSessionId}`,
                    },
                    outcome.deviceName,
                  ),
                  ' ',
                  h('span', { class: 'muted' }, `run ${outcome.runId}, ${time(outcome.time)}`),
                ),
              ),
            ),
          ),
        ),
      ),
      { empty: 'No flaky tests: every test passed or failed alike on each app build.', optional: [2] },
    ),
    flaky.total > flaky.data.length
      ? h('p', { class: 'muted' }, `The ${flaky.data.length} most recently seen of ${flaky.total} flaky tests.`)
      : '',
  );
}
