// Interactive sessions (docs/api.md#interactive-sessions): reserve a device, watch its screen as
// it changes, click on it to tap, type, press its keys, install an app, open a URL, release it.
// The screen is the API's multipart stream in an <img>: the browser shows each frame as it comes.

import { FINAL_DEVICE_SESSION_STATES } from '../final-states.js';
import { api, apiBlob } from '../api.js';
import { badge, field, h, statusLine } from '../dom.js';
import { current, page } from '../page.js';
/** @import { ApiDevice, ApiDeviceSession, ApiFile, ApiList } from '../../client/api-types.ts' */

const KEYS = [
  ['home', 'Home'],
  ['back', 'Back'],
  ['menu', 'Recent apps'],
  ['power', 'Power'],
  ['volumeDown', 'Volume down'],
  ['volumeUp', 'Volume up'],
];

/** The page that reserves a device (`#/live/new/{deviceId}` preselects one). */
export async function reserveView(/** @type {string | undefined} */ deviceId) {
  const status = statusLine();
  /** @type {ApiList<ApiDevice>} */
  const devices = await api('GET', '/api/v2/devices?limit=0&sort=displayName_a');
  const usable = devices.data.filter((device) => device.enabled);
  const select = h(
    'select',
    { name: 'deviceId' },
    usable.map((device) =>
      h(
        'option',
        { value: device.id, selected: String(device.id) === deviceId },
        `${device.displayName} (${device.osType === 'IOS' ? 'iOS' : 'Android'})`,
      ),
    ),
  );
  const form = h(
    'form',
    {
      class: 'inline-form',
      'aria-label': 'Reserve a device',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        try {
          /** @type {ApiDeviceSession} */
          const session = await api('POST', '/api/me/device-sessions', { deviceId: Number(select.value) });
          location.hash = `#/live/${session.id}`;
        } catch (error) {
          status.fail(error);
        }
      },
    },
    field('Device', select),
    h('button', { type: 'submit' }, 'Reserve'),
  );
  page(
    'Use a device live',
    h(
      'section',
      {},
      h('h1', {}, 'Use a device live'),
      h(
        'p',
        { class: 'muted' },
        'The device is yours until you release it (or it sits idle, or your plan’s time runs out); then it is cleaned.',
      ),
      form,
      status.element,
    ),
  );
}

/** One interactive session: its live screen and its controls. */
export async function liveView(/** @type {string} */ id) {
  const base = `/api/me/device-sessions/${id}`;
  const status = statusLine();
  const state = h('p', { class: 'live-state' }, 'Loading…');
  const screen = h('img', {
    class: 'live-screen',
    alt: 'The device’s screen: click to tap',
    tabindex: 0,
    hidden: true,
  });
  const log = h('ol', { class: 'live-log', 'aria-label': 'What you did' });
  const deviceLog = h('pre', { class: 'live-log device-log', 'aria-label': 'Device log', tabindex: 0 });
  const mine = page('Live device', h('section', {}, h('h1', {}, 'Live device'), state, status.element));
  const section = /** @type {HTMLElement} */ (document.querySelector('main section'));

  /** @param {Record<string, unknown>} input */
  const send = async (input) => {
    try {
      await api('POST', `${base}/input`, input);
      log.prepend(h('li', {}, describe(input)));
      status.clear();
    } catch (error) {
      status.fail(error);
    }
  };

  // A click lands where it shows on the device: the image is scaled, the device's pixels are not.
  /** @type {{ x: number, y: number, at: number } | null} */
  let pressed = null;
  screen.addEventListener('pointerdown', (event) => {
    pressed = { ...devicePoint(screen, event), at: Date.now() };
  });
  screen.addEventListener('pointerup', (event) => {
    if (pressed === null) return;
    const to = devicePoint(screen, event);
    const held = Date.now() - pressed.at;
    const moved = Math.hypot(to.x - pressed.x, to.y - pressed.y) > 10;
    const from = pressed;
    pressed = null;
    if (moved)
      void send({ action: 'swipe', x: from.x, y: from.y, toX: to.x, toY: to.y, durationMs: Math.max(held, 50) });
    else if (held >= 600) void send({ action: 'longPress', x: from.x, y: from.y });
    else void send({ action: 'tap', x: from.x, y: from.y });
  });

  const text = h('input', { name: 'text', maxlength: 500, autocomplete: 'off' });
  const url = h('input', { name: 'url', type: 'url', placeholder: 'https://', autocomplete: 'off' });
  const apps = h('select', { name: 'fileId' });
  const controls = h(
    'div',
    { class: 'live-controls' },
    h(
      'form',
      {
        class: 'inline-form',
        'aria-label': 'Type text',
        onsubmit: async (/** @type {Event} */ event) => {
          event.preventDefault();
          if (text.value === '') return;
          await send({ action: 'text', text: text.value });
          text.value = '';
        },
      },
      field('Text', text),
      h('button', { type: 'submit' }, 'Type'),
    ),
    h(
      'div',
      { class: 'button-row', role: 'group', 'aria-label': 'Keys' },
      KEYS.map(([key, label]) => h('button', { type: 'button', onclick: () => send({ action: 'key', key }) }, label)),
      h('button', { type: 'button', onclick: () => send({ action: 'key', key: 'enter' }) }, 'Enter'),
      h(
        'button',
        {
          type: 'button',
          onclick: () => {
            const landscape = screen.classList.toggle('landscape');
            void send({ action: 'rotate', orientation: landscape ? 'landscape' : 'portrait' });
          },
        },
        'Rotate',
      ),
    ),
    h(
      'form',
      {
        class: 'inline-form',
        'aria-label': 'Open a URL',
        onsubmit: async (/** @type {Event} */ event) => {
          event.preventDefault();
          await send({ action: 'openUrl', url: url.value });
        },
      },
      field('URL', url),
      h('button', { type: 'submit' }, 'Open'),
    ),
    h(
      'form',
      {
        class: 'inline-form',
        'aria-label': 'Install an app',
        onsubmit: async (/** @type {Event} */ event) => {
          event.preventDefault();
          if (apps.value !== '') await send({ action: 'install', fileId: Number(apps.value) });
        },
      },
      field('App', apps, 'Upload apps from Start a run'),
      h('button', { type: 'submit' }, 'Install'),
    ),
    h(
      'div',
      { class: 'button-row' },
      h('button', { type: 'button', onclick: () => screenshot(base, status) }, 'Screenshot'),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          onclick: async () => {
            try {
              await api('POST', `${base}/release`, {});
              status.ok('Released: the device is being cleaned for the next person.');
            } catch (error) {
              status.fail(error);
            }
          },
        },
        'Release',
      ),
    ),
    h('h2', {}, 'What you did'),
    log,
    h('h2', {}, 'Device log'),
    deviceLog,
  );
  controls.hidden = true;
  section.append(h('div', { class: 'live-layout' }, screen, controls));

  /** @type {ApiList<ApiFile>} */
  const files = await api('GET', '/api/me/files?limit=50&sort=createTime_d').catch(() => ({ data: [] }));
  apps.replaceChildren(
    ...files.data
      .filter((file) => file.inputType === 'APPLICATION')
      .map((file) => h('option', { value: file.id }, file.name)),
  );

  // The session's state until it ends: the screen shows once it is RUNNING.
  for (;;) {
    if (current() !== mine) return;
    /** @type {ApiDeviceSession} */
    const session = await api('GET', base);
    state.replaceChildren(badge(session.state), ' ', session.device.displayName);
    if (session.state === 'RUNNING' && screen.hidden) {
      screen.setAttribute('src', `${base}/live`);
      screen.hidden = false;
      controls.hidden = false;
      void follow(`${base}/logcat`, deviceLog, mine);
    }
    if (FINAL_DEVICE_SESSION_STATES.includes(session.state)) {
      screen.removeAttribute('src');
      screen.hidden = true;
      controls.hidden = true;
      state.append(' · ended');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * Appends the device's log to `pane` as it comes, keeping the last lines, while the page is shown.
 * @param {string} path
 * @param {HTMLElement} pane
 * @param {number} mine
 */
async function follow(path, pane, mine) {
  const response = await fetch(path, { credentials: 'same-origin' });
  if (!response.ok || response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done || current() !== mine) return void reader.cancel();
    const atBottom = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 4;
    pane.textContent = (pane.textContent + value).split('\n').slice(-1000).join('\n');
    if (atBottom) pane.scrollTop = pane.scrollHeight;
  }
}

/**
 * The point of the device's screen under the pointer.
 * @param {HTMLImageElement} image
 * @param {PointerEvent} event
 */
function devicePoint(image, event) {
  const box = image.getBoundingClientRect();
  const scaleX = image.naturalWidth / box.width;
  const scaleY = image.naturalHeight / box.height;
  return {
    x: Math.max(0, Math.min(image.naturalWidth - 1, Math.round((event.clientX - box.left) * scaleX))),
    y: Math.max(0, Math.min(image.naturalHeight - 1, Math.round((event.clientY - box.top) * scaleY))),
  };
}

/** @param {Record<string, unknown>} input */
function describe(input) {
  switch (input.action) {
    case 'tap':
    case 'longPress':
      return `${input.action === 'tap' ? 'Tap' : 'Long press'} at ${input.x}, ${input.y}`;
    case 'swipe':
      return `Swipe from ${input.x}, ${input.y} to ${input.toX}, ${input.toY}`;
    case 'text':
      return `Typed ${String(input.text).length} characters`;
    case 'key':
      return `Key ${input.key}`;
    default:
      return String(input.action);
  }
}

/**
 * Takes a screenshot and opens it in a new tab.
 * @param {string} base
 * @param {ReturnType<typeof statusLine>} status
 */
async function screenshot(base, status) {
  try {
    window.open(URL.createObjectURL(await apiBlob('POST', `${base}/screenshot`)), '_blank');
    status.ok('Screenshot taken.');
  } catch (error) {
    status.fail(error);
  }
}
