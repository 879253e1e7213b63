// The devicecloud dashboard: plain ES modules (no build step) over the public JSON API, signed in
// with the session cookie. This module signs in and out and maps addresses (#/...) to views;
// the addresses are those the API's uiLink fields point at.

import { ApiError, api, setCsrfToken } from './api.js';
import { h } from './dom.js';
import { SIGNED_OUT, page, setReloadHandler } from './page.js';
import { accountView } from './views/account.js';
import { adminView, notForYouView } from './views/admin.js';
import { deviceSessionView } from './views/device-session.js';
import { devicesView, groupView } from './views/devices.js';
import { liveView, reserveView } from './views/live.js';
import { projectRunsView, projectsView } from './views/projects.js';
import { runView } from './views/runs.js';
import { signInView } from './views/sign-in.js';
import { startRunView } from './views/start-run.js';
/** @import { ApiUser, ApiWebSession } from '../client/api-types.ts' */

/** An element of index.html, which has them all. */
const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const nav = byId('nav');
const adminLink = byId('nav-admin');
const who = byId('who');
/** @type {ApiUser | null} */
let me = null;

const isAdmin = () => me?.roles?.some((role) => role.name === 'ADMIN') === true;

/**
 * Address → view; the nav entry it belongs to is the first path segment's.
 * @type {Array<[RegExp, (id: string) => unknown]>}
 */
const ROUTES = [
  [/^\/$/, () => projectsView()],
  [/^\/start$/, () => startRunView()],
  [/^\/projects\/(\d+)$/, (id) => projectRunsView(id)],
  [/^\/projects\/(\d+)\/start$/, (id) => startRunView(id)],
  [/^\/(?:projects\/\d+\/)?runs\/(\d+)$/, (id) => runView(id)],
  [/^\/(?:projects\/\d+\/runs\/\d+\/)?device-sessions\/(\d+)$/, (id) => deviceSessionView(id)],
  [/^\/devices$/, () => devicesView()],
  [/^\/live\/new(?:\/(\d+))?$/, (id) => reserveView(id)],
  [/^\/live\/(\d+)$/, (id) => liveView(id)],
  [/^\/groups\/(\d+)$/, (id) => groupView(id)],
  [/^\/account$/, () => accountView()],
  [/^\/admin$/, () => (isAdmin() ? adminView(/** @type {ApiUser} */ (me)) : notForYouView())],
];

/** @param {string} path */
function section(path) {
  if (/^\/(projects\/\d+\/)?start$/.test(path)) return '#/start';
  if (/^\/(devices|groups|live)/.test(path)) return '#/devices';
  if (path === '/account') return '#/account';
  if (path === '/admin') return '#/admin';
  return '#/';
}

function route() {
  if (me === null) return;
  const path = location.hash.replace(/^#/, '') || '/';
  const here = section(path);
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === here) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  for (const [pattern, view] of ROUTES) {
    const match = pattern.exec(path);
    if (match) {
      Promise.resolve(view(/** @type {string} */ (match[1]))).catch(failed);
      return;
    }
  }
  page(
    'Not found',
    h(
      'section',
      {},
      h('h1', {}, 'Not found'),
      h('p', {}, 'Nothing lives at this address. ', h('a', { href: '#/' }, 'Go to the projects'), '.'),
    ),
  );
}

/** @param {unknown} error */
function failed(error) {
  if (error instanceof ApiError && error.status === 401) return signedOut('Your session has ended: sign in again.');
  page(
    'Problem',
    h(
      'section',
      {},
      h('h1', {}, 'Something went wrong'),
      h('p', { class: 'error', role: 'alert' }, /** @type {Error} */ (error).message),
    ),
  );
}

async function signedIn() {
  /** @type {ApiUser} */
  const user = await api('GET', '/api/me');
  me = user;
  who.textContent = user.email;
  adminLink.hidden = !isAdmin();
  nav.hidden = false;
  route();
}

/** @param {string} [message] */
function signedOut(message) {
  me = null;
  setCsrfToken(null);
  nav.hidden = true;
  signInView(message, signedIn);
}

byId('sign-out').addEventListener('click', async () => {
  await api('DELETE', '/auth/session').catch(() => undefined);
  // The next person to sign in on this browser starts from the projects, not from our last page.
  history.replaceState(null, '', '#/');
  signedOut('Signed out.');
});
byId('skip').addEventListener('click', (event) => {
  event.preventDefault();
  byId('main').focus();
});
window.addEventListener('hashchange', route);
window.addEventListener(SIGNED_OUT, () => signedOut('Your session has ended: sign in again.'));
setReloadHandler(route);

// 204 (null) when not signed in: the sign-in form below.
/** @type {ApiWebSession | null} */
const session = await api('GET', '/auth/session').catch(() => null);
if (session === null) signedOut();
else {
  setCsrfToken(session.csrfToken);
  await signedIn().catch((error) => (error instanceof ApiError && error.status === 401 ? signedOut() : failed(error)));
}
