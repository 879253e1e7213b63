// The account: profile and plan, the API key (hidden until revealed; copy; regenerate, which
// warns that scripts holding the old key stop working) and the password. The key is not part of
// the account record the session reads: it is asked for (POST /auth/api-key) when revealed or
// copied, which the server allows only within minutes of the password being entered; past that,
// the page asks for the password first (POST /auth/session/confirm).

import { ApiError, api } from '../api.js';
import { bytes, h, statusLine } from '../dom.js';
import { current, page } from '../page.js';
/** @import { ApiUser, ApiWebSession } from '../../client/api-types.ts' */

const HIDDEN_KEY = '••••••••••••••••••••••••••••••••';

/**
 * Files and artifacts kept, against the quota; uploads beyond it are refused.
 * @param {{ storageUsedBytes: number, storageQuotaBytes: number }} me
 */
function storage(me) {
  const full = me.storageUsedBytes >= me.storageQuotaBytes;
  return h(
    'span',
    { 'data-key': 'storage' },
    h('progress', {
      value: Math.min(me.storageUsedBytes, me.storageQuotaBytes),
      max: Math.max(me.storageQuotaBytes, 1),
      'aria-label': 'Storage used',
    }),
    ` ${bytes(me.storageUsedBytes)} of ${bytes(me.storageQuotaBytes)} used`,
    full ? h('span', { class: 'error' }, ' — full: new uploads and artifacts are refused until files are deleted') : '',
  );
}

export async function accountView() {
  const shown = page('Account', h('section', {}, h('h1', {}, 'Account'), h('p', { class: 'muted' }, 'Loading…')));
  /** @type {ApiUser & { plan: string, storageUsedBytes: number, storageQuotaBytes: number }} */
  const me = await api('GET', '/api/me');
  if (shown !== current()) return;
  const role = me.roles?.find((entry) => !entry.name.startsWith('PRIORITY_'))?.name ?? 'USER';

  /** @type {string | null} */
  let apiKey = null;
  let revealed = false;
  const key = h('code', { class: 'key', 'aria-label': 'API key' }, HIDDEN_KEY);
  const keyStatus = statusLine();
  const show = (/** @type {boolean} */ visible) => {
    revealed = visible;
    key.textContent = revealed ? apiKey : HIDDEN_KEY;
    reveal.textContent = revealed ? 'Hide' : 'Reveal';
    reveal.setAttribute('aria-pressed', String(revealed));
  };

  // Asked for when the sign-in is no longer recent: the action waiting for it runs once it is given.
  /** @type {(() => Promise<void>) | null} */
  let afterConfirm = null;
  const confirmInput = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'current-password',
    required: true,
    maxlength: 1024,
    id: 'confirm-password',
  });
  const confirmForm = h(
    'form',
    {
      class: 'stack',
      hidden: true,
      'aria-label': 'Confirm your password',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        try {
          await api('POST', '/auth/session/confirm', { password: confirmInput.value });
          confirmInput.value = '';
          confirmForm.hidden = true;
          const action = afterConfirm;
          afterConfirm = null;
          await action?.();
        } catch (error) {
          keyStatus.fail(error);
        }
      },
    },
    h('label', { for: 'confirm-password' }, 'Confirm with your password'),
    confirmInput,
    h('p', { class: 'help' }, 'The API key is shown only shortly after you entered your password.'),
    h('button', { type: 'submit' }, 'Confirm'),
  );

  /**
   * Runs `action`; when the server wants the password first, asks for it and runs it after.
   * @param {() => Promise<void>} action
   */
  const withRecentSignIn = async (action) => {
    keyStatus.clear();
    const askFirst = () => {
      afterConfirm = async () => {
        try {
          await action();
        } catch (again) {
          keyStatus.fail(again);
        }
      };
      confirmForm.hidden = false;
      confirmInput.focus();
    };
    try {
      /** @type {ApiWebSession | null} */
      const session = await api('GET', '/auth/session');
      if (session !== null && !session.recent) return askFirst();
      await action();
    } catch (error) {
      // The sign-in stopped being recent between the two requests.
      if (error instanceof ApiError && error.status === 403) return askFirst();
      keyStatus.fail(error);
    }
  };
  /** @returns {Promise<string>} */
  const fetchKey = async () => {
    apiKey ??= /** @type {string} */ ((await api('POST', '/auth/api-key')).apiKey);
    return apiKey;
  };

  const reveal = h(
    'button',
    {
      type: 'button',
      'aria-pressed': 'false',
      onclick: () =>
        revealed
          ? show(false)
          : withRecentSignIn(async () => {
              await fetchKey();
              show(true);
            }),
    },
    'Reveal',
  );
  const copy = h(
    'button',
    {
      type: 'button',
      onclick: () =>
        withRecentSignIn(async () => {
          const text = await fetchKey();
          try {
            await navigator.clipboard.writeText(text);
            keyStatus.ok('Copied.');
          } catch {
            keyStatus.ok('The browser did not allow copying: reveal the key and copy it by hand.');
          }
        }),
    },
    'Copy',
  );
  const regenerate = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        if (
          !confirm(
            'Regenerate the API key? Scripts and CI jobs that use the old key will stop working at once, and you are signed out everywhere else.',
          )
        )
          return;
        await withRecentSignIn(async () => {
          const updated = await api('POST', '/api/me/reset-api-key');
          apiKey = updated.apiKey;
          show(true);
          keyStatus.ok('A new key was issued; the old one no longer works.');
        });
      },
    },
    'Regenerate',
  );

  const passwordStatus = statusLine();
  const field = (/** @type {string} */ label, /** @type {string} */ name, /** @type {string} */ autocomplete) =>
    h(
      'label',
      {},
      label,
      h('input', {
        type: 'password',
        name,
        autocomplete,
        required: true,
        minlength: name === 'currentPassword' ? undefined : 8,
        maxlength: 1024,
      }),
    );
  const passwordForm = h(
    'form',
    {
      class: 'stack',
      'aria-label': 'Change the password',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        const data = new FormData(passwordForm);
        if (data.get('newPassword') !== data.get('repeatPassword')) {
          passwordStatus.fail(new Error('The two new passwords differ.'));
          return;
        }
        try {
          await api('POST', '/api/me/password', {
            currentPassword: data.get('currentPassword'),
            newPassword: data.get('newPassword'),
          });
          passwordForm.reset();
          passwordStatus.ok(
            'Your password was changed. You were signed out everywhere else, and OAuth tokens stopped working.',
          );
        } catch (error) {
          passwordStatus.fail(error);
        }
      },
    },
    field('Current password', 'currentPassword', 'current-password'),
    field('New password', 'newPassword', 'new-password'),
    field('Repeat the new password', 'repeatPassword', 'new-password'),
    h(
      'p',
      { class: 'help' },
      'At least 8 characters. Changing it signs you out everywhere else, and OAuth tokens stop working; API keys keep working.',
    ),
    h('button', { type: 'submit' }, 'Change password'),
    passwordStatus.element,
  );

  page(
    'Account',
    h(
      'section',
      {},
      h('h1', {}, 'Account'),
      h(
        'dl',
        { class: 'facts' },
        h('div', {}, h('dt', {}, 'Name'), h('dd', {}, me.name || '—')),
        h('div', {}, h('dt', {}, 'E-mail'), h('dd', {}, me.email)),
        h('div', {}, h('dt', {}, 'Plan'), h('dd', {}, me.plan)),
        h('div', {}, h('dt', {}, 'Role'), h('dd', {}, role)),
        h('div', {}, h('dt', {}, 'Storage'), h('dd', {}, storage(me))),
      ),
      h('h2', {}, 'API key'),
      h('p', { class: 'help' }, 'Scripts and CI use it as the user name of HTTP Basic, with an empty password.'),
      h('div', { class: 'row' }, key, reveal, copy, regenerate),
      confirmForm,
      keyStatus.element,
      h('h2', {}, 'Password'),
      passwordForm,
    ),
  );
}
