// The devicecloud dashboard: a page of plain modules (no build step) over the public JSON API,
// signed in with the session cookie; every change sends the session's CSRF token.
// Views: sign-in, projects, a project's runs, a run's device sessions, the account.

const state = { csrf: null, timer: null };
const main = document.getElementById('main');

/** Builds an element; strings become text nodes, so nothing from the API is parsed as HTML. */
function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) element.append(child instanceof Node ? child : String(child ?? ''));
  return element;
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET' && state.csrf) headers['x-csrf-token'] = state.csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data?.message ?? data?.error_description ?? `${response.status}`);
  return data;
}

function show(...children) {
  clearInterval(state.timer);
  main.replaceChildren(...children);
}

/** Shows a view now and again every `ms` while it is on screen (live state without reloading). */
function live(render, ms = 2000) {
  const draw = async () => {
    try {
      const view = await render();
      if (view) main.replaceChildren(view);
    } catch (error) {
      handle(error);
    }
  };
  clearInterval(state.timer);
  void draw();
  state.timer = setInterval(draw, ms);
}

function handle(error) {
  if (error instanceof ApiError && error.status === 401) return signInView();
  show(h('p', { class: 'error', role: 'alert' }, error.message));
}

function signInView(message) {
  document.getElementById('nav').hidden = true;
  const status = h('p', { class: 'error', role: 'alert' }, message ?? '');
  const form = h(
    'form',
    { class: 'stack', 'aria-label': 'Sign in', onsubmit: async (event) => {
      event.preventDefault();
      const data = new FormData(form);
      try {
        const session = await api('POST', '/auth/session', { email: data.get('email'), password: data.get('password') });
        state.csrf = session.csrfToken;
        document.getElementById('nav').hidden = false;
        location.hash = '#/';
        route();
      } catch (error) {
        status.textContent = error.message;
      }
    } },
    h('h1', {}, 'Sign in'),
    h('label', {}, 'E-mail', h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true })),
    h('label', {}, 'Password', h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true })),
    h('button', { type: 'submit' }, 'Sign in'),
    status,
  );
  show(form);
  form.querySelector('input').focus();
}

const stateCell = (value) => h('td', { class: `state-${value}` }, value);

async function projectsView() {
  const projects = await api('GET', '/api/me/projects?limit=0&sort=createTime_d');
  if (projects.data.length === 0) return h('section', {}, h('h1', {}, 'Projects'), h('p', { class: 'muted' }, 'No projects yet: start a run with the API or `devicecloud run`.'));
  return h(
    'section',
    {},
    h('h1', {}, 'Projects'),
    h('table', {},
      h('thead', {}, h('tr', {}, h('th', {}, 'Project'), h('th', {}, 'Type'), h('th', {}, 'Runs'))),
      h('tbody', {}, projects.data.map((project) =>
        h('tr', {}, h('td', {}, h('a', { href: `#/projects/${project.id}` }, project.name)), h('td', {}, project.type), h('td', {}, project.testRunCount ?? ''))))),
  );
}

async function runsView(projectId) {
  const [project, runs] = await Promise.all([api('GET', `/api/me/projects/${projectId}`), api('GET', `/api/me/projects/${projectId}/runs?limit=50`)]);
  return h(
    'section',
    {},
    h('p', {}, h('a', { href: '#/' }, '← Projects')),
    h('h1', {}, project.name),
    h('table', { 'aria-label': 'Runs' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Run'), h('th', {}, 'State'), h('th', {}, 'Devices'), h('th', {}, 'Tests passed / failed'), h('th', {}, 'Why it waits'))),
      h('tbody', {}, runs.data.map((run) =>
        h('tr', {},
          h('td', {}, h('a', { href: `#/runs/${run.id}` }, run.displayName)),
          stateCell(run.state),
          h('td', {}, `${run.finishedDeviceCount} of ${run.deviceCount} done`),
          h('td', {}, `${run.successfulTestCaseCount} / ${run.failedTestCaseCount}`),
          h('td', { class: 'muted' }, run.message ?? ''))))),
  );
}

async function runView(runId) {
  const [run, sessions] = await Promise.all([api('GET', `/api/v2/runs/${runId}`), api('GET', `/api/v2/runs/${runId}/device-sessions?limit=0`)]);
  const act = (action) => async () => {
    try {
      await api('POST', `/api/v2/runs/${runId}/${action}`);
      route();
    } catch (error) {
      handle(error);
    }
  };
  return h(
    'section',
    {},
    h('p', {}, h('a', { href: `#/projects/${run.projectId}` }, `← ${run.projectName}`)),
    h('h1', {}, run.displayName, ' ', h('span', { class: `state-${run.state}` }, run.state)),
    run.message ? h('p', { class: 'muted', 'aria-live': 'polite' }, run.message) : '',
    h('div', { class: 'row' },
      run.state !== 'FINISHED' ? h('button', { type: 'button', class: 'danger', onclick: act('abort') }, 'Abort run') : '',
      run.state === 'FINISHED' ? h('button', { type: 'button', onclick: act('retry') }, 'Retry failed devices') : ''),
    h('table', { 'aria-label': 'Device sessions' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Device'), h('th', {}, 'State'), h('th', {}, 'Step'), h('th', {}, 'Passed'), h('th', {}, 'Failed'))),
      h('tbody', {}, sessions.data.map((session) =>
        h('tr', {},
          h('td', {}, session.device?.displayName ?? ''),
          stateCell(session.state),
          h('td', {}, session.currentStep?.type ?? ''),
          h('td', {}, session.testCasePassedCount),
          h('td', {}, session.testCaseFailedCount))))),
  );
}

async function accountView() {
  const me = await api('GET', '/api/me');
  let revealed = false;
  const key = h('code', { class: 'key', 'aria-label': 'API key' }, '••••••••••••••••••••••••••••••••');
  const reveal = h('button', { type: 'button', onclick: () => {
    revealed = !revealed;
    key.textContent = revealed ? me.apiKey : '••••••••••••••••••••••••••••••••';
    reveal.textContent = revealed ? 'Hide' : 'Reveal';
  } }, 'Reveal');
  const status = h('p', { role: 'status' });
  const regenerate = h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (!confirm('Regenerate the API key? Scripts and CI jobs that use the old key will stop working at once.')) return;
    const updated = await api('POST', '/api/me/reset-api-key');
    me.apiKey = updated.apiKey;
    revealed = true;
    key.textContent = me.apiKey;
    reveal.textContent = 'Hide';
    status.textContent = 'A new key was issued; the old one no longer works.';
  } }, 'Regenerate');
  const copy = h('button', { type: 'button', onclick: async () => {
    await navigator.clipboard?.writeText(me.apiKey).catch(() => undefined);
    status.textContent = 'Copied.';
  } }, 'Copy');
  show(h('section', {},
    h('h1', {}, 'Account'),
    h('p', {}, `${me.name || me.email} — ${me.email}`),
    h('h2', {}, 'API key'),
    h('div', { class: 'row' }, key, reveal, copy, regenerate),
    status));
}

function route() {
  const path = location.hash.replace(/^#/, '') || '/';
  let match;
  if ((match = /^\/projects\/(\d+)$/.exec(path))) return live(() => runsView(match[1]));
  if ((match = /^\/runs\/(\d+)$/.exec(path))) return live(() => runView(match[1]));
  if (path === '/account') return accountView().catch(handle);
  return live(projectsView, 5000);
}

document.getElementById('sign-out').addEventListener('click', async () => {
  await api('DELETE', '/auth/session').catch(() => undefined);
  state.csrf = null;
  signInView('Signed out.');
});
window.addEventListener('hashchange', route);

try {
  const session = await api('GET', '/auth/session');
  state.csrf = session.csrfToken;
  document.getElementById('nav').hidden = false;
  route();
} catch {
  signInView();
}
