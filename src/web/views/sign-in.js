// Signing in with e-mail and password: the server sets the session cookie and answers the CSRF
// token the page sends with every change.

import { api, setCsrfToken } from '../api.js';
import { h } from '../dom.js';
import { page } from '../page.js';
/** @import { ApiWebSession } from '../../client/api-types.ts' */

/**
 * @param {string | undefined} message
 * @param {() => Promise<void>} onSignedIn
 */
export function signInView(message, onSignedIn) {
  const status = h('p', { class: 'notice', role: 'alert' }, message ?? '');
  const form = h(
    'form',
    {
      class: 'stack',
      'aria-label': 'Sign in',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        const data = new FormData(form);
        const button = /** @type {HTMLButtonElement} */ (form.querySelector('button'));
        button.disabled = true;
        try {
          /** @type {ApiWebSession} */
          const session = await api('POST', '/auth/session', {
            email: data.get('email'),
            password: data.get('password'),
          });
          setCsrfToken(session.csrfToken);
          await onSignedIn();
        } catch (error) {
          status.className = 'error';
          status.textContent = /** @type {Error} */ (error).message;
        } finally {
          button.disabled = false;
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('label', {}, 'E-mail', h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true })),
    h(
      'label',
      {},
      'Password',
      h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    status,
  );
  page('Sign in', form);
  /** @type {HTMLInputElement} */ (form.querySelector('input')).focus();
}
