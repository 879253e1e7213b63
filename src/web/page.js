// What is on screen: one view at a time in <main>, parts of it kept live by polling while they
// are shown. A refresh that changes nothing leaves the page alone, and one that does keeps the
// keyboard focus and opened details where they were, so live pages stay usable with the keyboard.

import { ApiError } from './api.js';
import { h } from './dom.js';

/** @typedef {Element | { view: Element, done?: boolean, title?: string }} Rendered What a live part shows. */

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
let generation = 0;

/** Fired when the API says the session is gone; app.js answers with the sign-in form. */
export const SIGNED_OUT = 'devicecloud:signed-out';

/** Which page is shown; an answer that arrives after the user moved on must not replace it. */
export function current() {
  return generation;
}

/** @type {() => void} */
let reloadHandler = () => undefined;

/**
 * app.js says how to show the current address again (after an action changes what it shows).
 * @param {() => void} handler
 */
export function setReloadHandler(handler) {
  reloadHandler = handler;
}

export function reload() {
  reloadHandler();
}

/**
 * Starts a new page: polls of the previous one stop at their next tick.
 * @param {string} title
 * @param {...Node} children
 */
export function page(title, ...children) {
  generation += 1;
  document.title = `${title} · devicecloud`;
  main.replaceChildren(...children);
  const heading = main.querySelector('h1');
  if (heading) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
  return generation;
}

/**
 * Fills `container` with what `render` answers, again every `every` ms while the page is shown.
 * `render` answers an element, or `{ view, done }` where `done` stops polling (a finished run).
 * @param {HTMLElement} container
 * @param {() => Promise<Rendered>} render
 * @param {number} every ms; 0 draws once
 * @returns {Promise<void>}
 */
export function poll(container, render, every) {
  const mine = generation;
  let shown = '';
  let failures = 0;
  const draw = async () => {
    if (mine !== generation) return;
    if (document.hidden && shown !== '') return void setTimeout(draw, every);
    /** @type {Rendered} */
    let result;
    try {
      result = await render();
      failures = 0;
    } catch (error) {
      if (mine !== generation) return;
      if (error instanceof ApiError && error.status === 401) return void window.dispatchEvent(new Event(SIGNED_OUT));
      failures += 1;
      const transient = !(error instanceof ApiError) || error.status === 0 || error.status >= 500;
      // A live page keeps its last view through one hiccup (a server restarting); anything else is said.
      if (shown === '' || !transient || failures > 1) showProblem(container, error);
      if (every && transient) setTimeout(draw, Math.min(every * 2 ** failures, 30_000));
      return;
    }
    if (mine !== generation) return;
    const { view, done, title } = result instanceof Node ? { view: result, done: false } : result;
    if (title) document.title = `${title} · devicecloud`;
    container.querySelector(':scope > .problem')?.remove();
    // Headings take focus after navigation (page()), and must still take it after a refresh.
    for (const heading of view.querySelectorAll('h1')) heading.tabIndex = -1;
    const html = view.outerHTML;
    if (html !== shown) {
      replaceKeepingFocus(container, view);
      shown = html;
    }
    if (every && !done) setTimeout(draw, every);
  };
  return draw();
}

/**
 * A whole page that is live: the title and the first view, then polling.
 * @param {string} title
 * @param {() => Promise<Rendered>} render
 */
export async function livePage(title, render, every = 2000) {
  const container = h('div', { class: 'live' }, h('p', { class: 'muted' }, 'Loading…'));
  page(title, container);
  const mine = generation;
  await poll(container, render, every);
  if (mine === generation) container.querySelector('h1')?.focus({ preventScroll: true });
}

/**
 * @param {HTMLElement} container
 * @param {unknown} error
 */
function showProblem(container, error) {
  const existing = container.querySelector(':scope > .problem');
  const message = error instanceof Error ? error.message : String(error);
  if (existing) {
    existing.textContent = message;
    return;
  }
  container.prepend(h('p', { class: 'problem error', role: 'alert' }, message));
}

/**
 * How an element is found again after a refresh; `data-key` names one whose text changes (toggles).
 * @param {HTMLElement} element
 */
function keyOf(element) {
  if (element.dataset.key) return element.dataset.key;
  return [
    element.tagName,
    element.getAttribute('href') ?? '',
    element.getAttribute('name') ?? '',
    element.getAttribute('aria-label') ?? '',
    element.textContent.trim(),
  ].join('|');
}

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]';

/**
 * @param {HTMLElement} container
 * @param {Element} view
 */
function replaceKeepingFocus(container, view) {
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  const focusKey = active && container.contains(active) && active !== container ? keyOf(active) : null;
  const opened = new Set(
    [...container.querySelectorAll('details[open] > summary')].map((summary) =>
      keyOf(/** @type {HTMLElement} */ (summary)),
    ),
  );
  for (const summary of view.querySelectorAll('details > summary')) {
    if (opened.has(keyOf(/** @type {HTMLElement} */ (summary))))
      /** @type {HTMLDetailsElement} */ (summary.parentElement).open = true;
  }
  container.replaceChildren(view);
  if (focusKey !== null) {
    const again = /** @type {HTMLElement[]} */ ([...container.querySelectorAll(FOCUSABLE)]).find(
      (element) => keyOf(element) === focusKey,
    );
    again?.focus({ preventScroll: true });
  }
}
