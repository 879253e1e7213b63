// Building elements, and the small pieces every view shows (states, tables, times and sizes).

/**
 * What `h` takes as children: nodes, text (anything else is shown as its text) and lists of them;
 * null, undefined, false and '' are left out.
 * @typedef {Node | string | number | boolean | null | undefined | readonly Child[]} Child
 */

/**
 * Builds an element; strings become text nodes, so nothing from the API is parsed as HTML.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [attrs] attributes; `on…` functions become listeners
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name.startsWith('on') && typeof value === 'function')
      element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  for (const child of /** @type {unknown[]} */ (children).flat(Infinity)) {
    if (child === null || child === undefined || child === false || child === '') continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** @type {Record<string, string>} */
const FRIENDLY = {
  NOT_OPERATIONAL: 'NOT OPERATIONAL',
};

/**
 * A state as text with its colour; the colour only repeats what the text says.
 * @param {string} state
 */
export function badge(state) {
  return h('span', { class: `state state-${state}` }, FRIENDLY[state] ?? state);
}

/**
 * A table that scrolls sideways on a narrow screen instead of squeezing its columns; the columns
 * numbered in `options.optional` are left out there.
 * @param {string} label
 * @param {string[]} headings
 * @param {HTMLTableRowElement[]} rows
 * @param {{ optional?: number[], class?: string, empty?: string }} [options]
 */
export function table(label, headings, rows, options = {}) {
  for (const row of rows) for (const index of options.optional ?? []) row.children[index]?.classList.add('optional');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { 'aria-label': label, class: options.class },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headings.map((heading, index) =>
            h('th', { scope: 'col', class: options.optional?.includes(index) ? 'optional' : null }, heading),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        rows.length > 0
          ? rows
          : h('tr', {}, h('td', { colspan: headings.length, class: 'muted' }, options.empty ?? 'Nothing yet.')),
      ),
    ),
  );
}

/** @param {number | null | undefined} ms */
export function time(ms) {
  if (ms === null || ms === undefined) return '';
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** @param {number | null | undefined} ms */
export function duration(ms) {
  if (ms === null || ms === undefined) return '';
  // Steps and test cases often take less than a second: tenths say more than "0 s" then.
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** @param {number} count */
export function bytes(count) {
  if (count < 1024) return `${count} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = count;
  let unit = -1;
  do {
    value /= 1024;
    unit += 1;
  } while (value >= 1024 && unit < units.length - 1);
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** @param {number} ratio */
export function percent(ratio) {
  return `${Math.round(ratio * 100)} %`;
}

/** A status line for what an action did; `alert` for failures, so screen readers say them at once. */
export function statusLine() {
  const element = h('p', { class: 'status', role: 'status' });
  return {
    element,
    /** @param {string} text */
    ok(text) {
      element.className = 'status';
      element.setAttribute('role', 'status');
      element.textContent = text;
    },
    /** @param {unknown} error */
    fail(error) {
      element.className = 'status error';
      element.setAttribute('role', 'alert');
      element.textContent = error instanceof Error ? error.message : String(error);
    },
    clear() {
      element.textContent = '';
    },
  };
}

let fieldCount = 0;

/**
 * A labelled control. The label names the control through `for`, not by wrapping it: a wrapped
 * select would lend its options' text to its name.
 * @param {string} label
 * @param {HTMLElement} control
 * @param {string} [help]
 */
export function field(label, control, help) {
  fieldCount += 1;
  if (!control.id) control.id = `field-${fieldCount}`;
  const helpText = help ? h('p', { class: 'help', id: `${control.id}-help` }, help) : '';
  if (help) control.setAttribute('aria-describedby', `${control.id}-help`);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, helpText);
}
