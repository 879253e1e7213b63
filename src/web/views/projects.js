// Projects, and the runs of one project, live.

import { api } from '../api.js';
import { h, table, time } from '../dom.js';
import { livePage } from '../page.js';
import { PASS_RATE_RUNS, passRate, resultBadge } from '../run-result.js';
import { flakyTestsTable } from './flaky-tests.js';
/** @import { ApiFlakyTest, ApiList, ApiProject, ApiTestRun } from '../../client/api-types.ts' */

export function projectsView() {
  return livePage(
    'Projects',
    async () => {
      /** @type {ApiList<ApiProject>} */
      const projects = await api('GET', `/api/me/projects?limit=0&sort=createTime_d&embedRuns=${PASS_RATE_RUNS}`);
      return h(
        'section',
        {},
        h(
          'div',
          { class: 'title-row' },
          h('h1', {}, 'Projects'),
          h('a', { href: '#/start', class: 'button primary' }, 'Start a run'),
        ),
        projects.data.length === 0
          ? h(
              'p',
              { class: 'muted' },
              'No projects yet. ',
              h('a', { href: '#/start' }, 'Start a run'),
              ' to create one, or use the API or ',
              h('code', {}, 'devicecloud run'),
              '.',
            )
          : table(
              'Projects',
              ['Project', 'Type', 'Runs', `Passed (last ${PASS_RATE_RUNS})`, 'Latest run'],
              projects.data.map((project) => {
                const latest = project.testRuns?.[0];
                const rate = passRate(project.testRuns ?? []);
                return h(
                  'tr',
                  {},
                  h('td', {}, h('a', { href: `#/projects/${project.id}` }, project.name)),
                  h('td', {}, project.type),
                  h('td', {}, project.testRunCount ?? ''),
                  h(
                    'td',
                    { class: 'pass-rate' },
                    rate === null
                      ? h('span', { class: 'muted' }, '–')
                      : `${Math.round((100 * rate.passed) / rate.of)}% (${rate.passed} of ${rate.of})`,
                  ),
                  h(
                    'td',
                    {},
                    latest
                      ? [
                          h('a', { href: `#/projects/${project.id}/runs/${latest.id}` }, latest.displayName),
                          ' ',
                          resultBadge(latest),
                        ]
                      : h('span', { class: 'muted' }, 'none'),
                  ),
                );
              }),
              { optional: [1] },
            ),
      );
    },
    5000,
  );
}

/** @param {string} projectId */
export function projectRunsView(projectId) {
  return livePage(
    'Project',
    async () => {
      /** @type {[ApiProject, ApiList<ApiTestRun>, ApiList<ApiFlakyTest>]} */
      const [project, runs, flaky] = await Promise.all([
        api('GET', `/api/me/projects/${projectId}`),
        api('GET', `/api/me/projects/${projectId}/runs?limit=50`),
        api('GET', `/api/me/projects/${projectId}/flaky-tests?limit=20`),
      ]);
      // A column that is empty unless a run waits would only take room (on a phone, all of it).
      const waits = (/** @type {ApiTestRun} */ run) =>
        run.state !== 'FINISHED' && Boolean(run.queuePosition || run.message);
      const anyWaits = runs.data.some(waits);
      const view = h(
        'section',
        {},
        h('nav', { 'aria-label': 'Breadcrumb', class: 'crumbs' }, h('a', { href: '#/' }, 'Projects')),
        h(
          'div',
          { class: 'title-row' },
          h('h1', {}, project.name),
          h('a', { href: `#/projects/${projectId}/start`, class: 'button primary' }, 'Start a run'),
        ),
        table(
          'Runs',
          ['Run', 'Result', 'Devices', 'Tests passed / failed', 'Started', ...(anyWaits ? ['Why it waits'] : [])],
          runs.data.map((run) =>
            h(
              'tr',
              {},
              h('td', {}, h('a', { href: `#/projects/${projectId}/runs/${run.id}` }, run.displayName)),
              h('td', {}, resultBadge(run)),
              h('td', {}, `${run.finishedDeviceCount} of ${run.deviceCount} done`),
              h('td', {}, `${run.successfulTestCaseCount} / ${run.failedTestCaseCount}`),
              h('td', {}, time(run.createTime)),
              anyWaits
                ? h(
                    'td',
                    { class: 'muted' },
                    waits(run) ? [run.queuePosition ? `#${run.queuePosition} in line. ` : '', run.message ?? ''] : '',
                  )
                : '',
            ),
          ),
          { empty: 'No runs in this project yet.', optional: [4] },
        ),
        runs.total > runs.data.length
          ? h('p', { class: 'muted' }, `The ${runs.data.length} most recent of ${runs.total} runs.`)
          : '',
        flakyTestsTable(projectId, flaky),
      );
      return { view, title: project.name };
    },
    3000,
  );
}
