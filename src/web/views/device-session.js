// One device session: its video with a timeline, its steps, test cases (failures with their stack traces), CPU and memory
// charts, screenshots, log and downloads. Live until it ends. Images and downloads are plain
// links: the session cookie authenticates them like the API calls.

import { api, apiText } from '../api.js';
import { lineChart } from '../charts.js';
import { badge, bytes, duration, h, time } from '../dom.js';
import { FINAL_DEVICE_SESSION_STATES } from '../final-states.js';
import { livePage } from '../page.js';
import { osOf } from './runs.js';
import { videoPlayer } from './video.js';
/** @import { ApiDeviceSession, ApiFile, ApiList, ApiSample, ApiScreenshot, ApiStep, ApiTestCaseRun, ApiTestRun } from '../../client/api-types.ts' */
/** @import { Child } from '../dom.js' */
/** Beyond this the page shows the end of the log and offers the whole file. */
const LOG_TAIL = 100_000;

/** @param {string} sessionId */
export function deviceSessionView(sessionId) {
  const base = `/api/v2/device-sessions/${sessionId}`;
  return livePage(
    'Device session',
    async () => {
      /** @type {[ApiDeviceSession, ApiList<ApiStep>, ApiList<ApiTestCaseRun>, ApiSample[], ApiList<ApiScreenshot>, ApiList<ApiFile>, string]} */
      const [session, steps, cases, samples, screenshots, outputs, log] = await Promise.all([
        api('GET', base),
        api('GET', `${base}/steps`),
        api('GET', `${base}/test-case-runs`),
        api('GET', `${base}/performance`),
        api('GET', `${base}/screenshots`),
        api('GET', `${base}/output-file-set/files`),
        apiText(`${base}/logs`),
      ]);
      /** @type {ApiTestRun} */
      const run = await api('GET', `/api/v2/runs/${session.testRunId}`);
      const name = session.device?.displayName ?? `Device session ${session.id}`;
      const view = h(
        'section',
        {},
        h(
          'nav',
          { 'aria-label': 'Breadcrumb', class: 'crumbs' },
          h('a', { href: '#/' }, 'Projects'),
          ' / ',
          h('a', { href: `#/projects/${run.projectId}` }, run.projectName),
          ' / ',
          h('a', { href: `#/projects/${run.projectId}/runs/${run.id}` }, run.displayName),
        ),
        h('h1', {}, name, ' ', badge(session.state)),
        facts(session),
        downloads(base, outputs.data, log.length > 0),
        h('h2', {}, 'Video'),
        videoPlayer(session, steps.data, cases.data),
        h('h2', {}, 'Steps'),
        stepList(steps.data),
        h('h2', {}, 'Test cases'),
        testCases(cases.data),
        h('h2', {}, 'CPU and memory'),
        charts(samples, FINAL_DEVICE_SESSION_STATES.includes(session.state)),
        h('h2', {}, 'Screenshots'),
        gallery(base, screenshots.data),
        h('h2', {}, 'Log'),
        logView(log),
      );
      return { view, title: `${name} · ${run.displayName}`, done: FINAL_DEVICE_SESSION_STATES.includes(session.state) };
    },
    3000,
  );
}

/** @param {ApiDeviceSession} session */
function facts(session) {
  const fact = (/** @type {string} */ term, /** @type {Child} */ value) =>
    value === '' || value === null || value === undefined ? '' : h('div', {}, h('dt', {}, term), h('dd', {}, value));
  return h(
    'dl',
    { class: 'facts' },
    fact('Device', osOf(session.device)),
    fact('Excluded because', session.excludeReason),
    fact(
      'Tests',
      `${session.testCasePassedCount} passed, ${session.testCaseFailedCount} failed, ${session.testCaseSkippedCount} skipped of ${session.testCaseAllCount}`,
    ),
    fact('Created', time(session.createTime)),
    fact('Started', time(session.startTime)),
    fact('Ended', time(session.endTime)),
    fact('Duration', duration(session.duration)),
    fact('Time limit', session.timeLimit ? `${session.timeLimit} s` : ''),
    fact('Retried', session.retryState === 'NONE' ? '' : session.retryState),
  );
}

/**
 * @param {string} base
 * @param {ApiFile[]} files
 * @param {boolean} hasLog
 */
function downloads(base, files, hasLog) {
  const items = [
    h(
      'li',
      {},
      h('a', { href: `${base}/junit.xml`, download: 'junit.xml' }, 'JUnit report'),
      h('span', { class: 'muted' }, ' (junit.xml)'),
    ),
    hasLog
      ? h(
          'li',
          {},
          h('a', { href: `${base}/logs`, target: '_blank', rel: 'noopener' }, 'Whole log'),
          h('span', { class: 'muted' }, ' (text)'),
        )
      : '',
    ...files.map((file) =>
      h(
        'li',
        {},
        h('a', { href: `${base}/output-file-set/files/${file.id}/file`, download: file.name }, file.name),
        h('span', { class: 'muted' }, ` (${bytes(file.size)}${file.tags?.length ? `, ${file.tags.join(', ')}` : ''})`),
      ),
    ),
  ];
  return h('div', { class: 'downloads' }, h('h2', {}, 'Downloads'), h('ul', { 'aria-label': 'Downloads' }, items));
}

/** @param {ApiStep[]} steps */
function stepList(steps) {
  if (steps.length === 0) return h('p', { class: 'muted' }, 'No steps yet.');
  return h(
    'ol',
    { class: 'timeline', 'aria-label': 'Steps' },
    steps.map((step) =>
      h(
        'li',
        { class: step.failReason ? 'failed' : '' },
        h('strong', {}, step.type),
        h('span', { class: 'muted' }, ` ${time(step.startTimeMS)}`),
        ' · ',
        step.finishTimeMS === null ? h('em', {}, 'in progress') : duration(step.finishTimeMS - step.startTimeMS),
        step.failReason ? h('p', { class: 'error' }, step.failReason) : '',
      ),
    ),
  );
}

/** @param {ApiTestCaseRun[]} cases */
function testCases(cases) {
  if (cases.length === 0) return h('p', { class: 'muted' }, 'No test results yet.');
  const count = (/** @type {ApiTestCaseRun['result']} */ result) =>
    cases.filter((testCase) => testCase.result === result).length;
  // Failures first: they are what one opens this page for.
  const ordered = [...cases].sort((a, b) => (a.result === 'FAILED' ? 0 : 1) - (b.result === 'FAILED' ? 0 : 1));
  return h(
    'div',
    {},
    h('p', {}, `${count('PASSED')} passed, ${count('FAILED')} failed, ${count('SKIPPED')} skipped`),
    h(
      'ul',
      { class: 'cases', 'aria-label': 'Test cases' },
      ordered.map((testCase) =>
        h(
          'li',
          {},
          h(
            'div',
            { class: 'case-head' },
            badge(testCase.result),
            h(
              'span',
              { class: 'case-name' },
              h('span', { class: 'muted' }, `${testCase.className}#`),
              testCase.methodName,
            ),
            h('span', { class: 'muted' }, duration(testCase.duration)),
          ),
          testCase.result === 'FAILED'
            ? h(
                'details',
                {},
                h('summary', {}, testCase.errorMessage || 'Failure'),
                testCase.stacktrace
                  ? h(
                      'pre',
                      { class: 'stack', tabindex: 0, 'aria-label': `Stack trace of ${testCase.methodName}` },
                      testCase.stacktrace,
                    )
                  : '',
              )
            : '',
        ),
      ),
    ),
  );
}

/**
 * @param {ApiSample[]} samples
 * @param {boolean} ended
 */
function charts(samples, ended) {
  if (samples.length === 0)
    return h(
      'p',
      { class: 'muted' },
      ended ? 'The device recorded no CPU or memory samples.' : 'No CPU or memory samples yet.',
    );
  const start = samples[0].timestamp;
  // A device that does not report memory (iOS) sends null: no point rather than a false zero.
  const points = (/** @type {(sample: ApiSample) => number | null} */ value) =>
    samples
      .filter((sample) => value(sample) !== null)
      .map((sample) => ({ t: sample.timestamp - start, v: /** @type {number} */ (value(sample)) }));
  const memory = points((sample) => (sample.memUsage === null ? null : sample.memUsage / 1024));
  // Two charts side by side on a wide screen, one above the other on a phone.
  const width = window.innerWidth < 700 ? 380 : 640;
  return h(
    'div',
    { class: 'charts' },
    h(
      'figure',
      {},
      lineChart({
        id: 'cpu-chart',
        title: 'CPU usage',
        yLabel: 'CPU (%)',
        points: points((sample) => sample.cpuUsage * 100),
        max: 100,
        format: (v) => `${Math.round(v)} %`,
        width,
      }),
      h('figcaption', {}, 'CPU usage of the app under test'),
    ),
    h(
      'figure',
      {},
      memory.length === 0
        ? h('p', { class: 'muted', id: 'memory-chart' }, 'This device does not report the memory of the app.')
        : lineChart({
            id: 'memory-chart',
            title: 'Memory usage',
            yLabel: 'Memory (MB)',
            points: memory,
            format: (v) => `${v < 10 ? v.toFixed(1) : Math.round(v)} MB`,
            width,
          }),
      h('figcaption', {}, 'Memory used by the app under test'),
    ),
  );
}

/**
 * @param {string} base
 * @param {ApiScreenshot[]} screenshots
 */
function gallery(base, screenshots) {
  if (screenshots.length === 0) return h('p', { class: 'muted' }, 'No screenshots.');
  return h(
    'ul',
    { class: 'gallery', 'aria-label': 'Screenshots' },
    screenshots.map((shot) => {
      const url = `${base}/screenshots/${shot.id}`;
      return h(
        'li',
        {},
        h(
          'figure',
          {},
          h(
            'a',
            { href: url, target: '_blank', rel: 'noopener' },
            h('img', { src: url, alt: `Screenshot ${shot.originalName}`, loading: 'lazy' }),
          ),
          h('figcaption', {}, shot.originalName),
        ),
      );
    }),
  );
}

/** @param {string} log */
function logView(log) {
  if (log.length === 0) return h('p', { class: 'muted' }, 'No log yet.');
  const cut = log.length > LOG_TAIL;
  return h(
    'div',
    {},
    cut
      ? h(
          'p',
          { class: 'muted' },
          `The last ${Math.round(LOG_TAIL / 1000)} thousand characters; the whole log is under Downloads.`,
        )
      : '',
    h('pre', { class: 'log', tabindex: 0, 'aria-label': 'Log' }, cut ? log.slice(-LOG_TAIL) : log),
  );
}
