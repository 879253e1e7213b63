// The video of a device session next to what happened in it (docs/api.md#videos): its steps and
// its failed test cases on a timeline under the player, each a button that seeks the video there.

import { h } from '../dom.js';
import { FINAL_DEVICE_SESSION_STATES } from '../final-states.js';
/** @import { ApiDeviceSession, ApiStep, ApiTestCaseRun } from '../../client/api-types.ts' */

/**
 * @typedef {{ at: number, label: string, failed: boolean }} Moment
 * `at`: seconds from the start of the video.
 */

/**
 * The moments of a session on its video's clock. The video starts as the device host takes the
 * session (its start time); test cases carry no time of their own, so they are placed one after
 * the other from the start of the RUNNING step, in the order they were reported.
 * @param {ApiDeviceSession} session
 * @param {ApiStep[]} steps
 * @param {ApiTestCaseRun[]} cases
 * @returns {Moment[]}
 */
export function moments(session, steps, cases) {
  const taken = steps.filter((step) => step.type !== 'WAITING');
  const zero = session.startTime ?? taken[0]?.startTimeMS ?? session.createTime;
  const at = (/** @type {number} */ ms) => Math.max(0, (ms - zero) / 1000);
  /** @type {Moment[]} */
  const list = taken.map((step) => ({ at: at(step.startTimeMS), label: step.type, failed: step.failReason !== null }));
  const running = taken.find((step) => step.type === 'RUNNING');
  if (running !== undefined) {
    let t = at(running.startTimeMS);
    for (const testCase of cases) {
      if (testCase.result === 'FAILED') list.push({ at: t, label: `${testCase.methodName} failed`, failed: true });
      t += testCase.duration / 1000;
    }
  }
  return list.sort((a, b) => a.at - b.at);
}

/** @param {number} seconds */
function clock(seconds) {
  const whole = Math.floor(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/**
 * The player and its timeline; nothing when the session has no video.
 * @param {ApiDeviceSession} session
 * @param {ApiStep[]} steps
 * @param {ApiTestCaseRun[]} cases
 */
export function videoPlayer(session, steps, cases) {
  if (!session.video)
    return h(
      'p',
      { class: 'muted' },
      FINAL_DEVICE_SESSION_STATES.includes(session.state)
        ? 'This session has no video.'
        : 'The video of the session comes when it ends.',
    );
  // Same origin as the page, whatever public address the server names in its links.
  const video = h('video', {
    src: new URL(session.video, location.href).pathname,
    controls: true,
    preload: 'metadata',
    class: 'session-video',
    'aria-label': 'Video of the session',
  });
  const marks = moments(session, steps, cases);
  const seek = (/** @type {number} */ at) => {
    video.currentTime = at;
  };
  const length = Math.max(1, (session.duration ?? 0) / 1000);
  // The bar shows where things happened; the list below is the same for keyboards and readers.
  const bar = h(
    'div',
    { class: 'video-bar', 'aria-hidden': 'true' },
    marks.map((mark) => {
      const button = h('button', {
        type: 'button',
        tabindex: -1,
        class: mark.failed ? 'mark failed' : 'mark',
        title: `${clock(mark.at)} ${mark.label}`,
        onclick: () => seek(mark.at),
      });
      button.style.left = `${Math.min(100, (mark.at / length) * 100)}%`;
      return button;
    }),
  );
  return h(
    'div',
    { class: 'video-panel' },
    video,
    bar,
    h(
      'ol',
      { class: 'video-timeline', 'aria-label': 'Video timeline' },
      marks.map((mark) =>
        h(
          'li',
          { class: mark.failed ? 'failed' : '' },
          h(
            'button',
            { type: 'button', class: 'link', 'data-at': mark.at.toFixed(3), onclick: () => seek(mark.at) },
            h('span', { class: 'muted' }, clock(mark.at)),
            ' ',
            mark.label,
          ),
        ),
      ),
    ),
  );
}
