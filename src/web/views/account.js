// The account: profile and plan, the API key (hidden until revealed; copy; regenerate, which
// warns that scripts holding the old key stop working) and the password.

import { api } from '../api.js';
import { bytes, h, statusLine } from '../dom.js';
import { current, page } from '../page.js';

const HIDDEN_KEY = '••••••••••••••••••••••••••••••••';

/** Files and artifacts kept, against the quota; uploads beyond it are refused. */
function storage(me) {
  const full = me.storageUsedBytes >= me.storageQuotaBytes;
  return h('span', { 'data-key': 'storage' },
    h('progress', { value: Math.min(me.storageUsedBytes, me.storageQuotaBytes), max: Math.max(me.storageQuotaBytes, 1), 'aria-label': 'Storage used' }),
    ` ${bytes(me.storageUsedBytes)} of ${bytes(me.storageQuotaBytes)} used`,
    full ? h('span', { class: 'error' }, ' — full: new uploads and artifacts are refused until files are deleted') : '');
}

/** `onPasswordChanged` is told when the change signed the user out (every session ends). */
export async function accountView(onPasswordChanged) {
  const shown = page('Account', h('section', {}, h('h1', {}, 'Account'), h('p', { class: 'muted' }, 'Loading…')));
  const me = await api('GET', '/api/me');
  if (shown !== current()) return;
  const role = me.roles?.find((entry) => !entry.name.startsWith('PRIORITY_'))?.name ?? 'USER';

  let revealed = false;
  const key = h('code', { class: 'key', 'aria-label': 'API key' }, HIDDEN_KEY);
  const keyStatus = statusLine();
  const reveal = h('button', {
    type: 'button',
    'aria-pressed': 'false',
    onclick: () => {
      revealed = !revealed;
      key.textContent = revealed ? me.apiKey : HIDDEN_KEY;
      reveal.textContent = revealed ? 'Hide' : 'Reveal';
      reveal.setAttribute('aria-pressed', String(revealed));
    },
  }, 'Reveal');
  const copy = h('button', {
    type: 'button',
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(me.apiKey);
        keyStatus.ok('Copied.');
      } catch {
        keyStatus.ok('The browser did not allow copying: reveal the key and copy it by hand.');
      }
    },
  }, 'Copy');
  const regenerate = h('button', {
    type: 'button',
    class: 'danger',
    onclick: async () => {
      if (!confirm('Regenerate the API key? Scripts and CI jobs that use the old key will stop working at once.')) return;
      try {
        const updated = await api('POST', '/api/me/reset-api-key');
        me.apiKey = updated.apiKey;
        revealed = true;
        key.textContent = me.apiKey;
        reveal.textContent = 'Hide';
        reveal.setAttribute('aria-pressed', 'true');
        keyStatus.ok('A new key was issued; the old one no longer works.');
      } catch (error) {
        keyStatus.fail(error);
      }
    },
  }, 'Regenerate');

  const passwordStatus = statusLine();
  const field = (label, name, autocomplete) => h('label', {}, label, h('input', { type: 'password', name, autocomplete, required: true, minlength: name === 'currentPassword' ? undefined : 8, maxlength: 1024 }));
  const passwordForm = h('form', {
    class: 'stack',
    'aria-label': 'Change the password',
    onsubmit: async (event) => {
      event.preventDefault();
      const data = new FormData(passwordForm);
      if (data.get('newPassword') !== data.get('repeatPassword')) {
        passwordStatus.fail(new Error('The two new passwords differ.'));
        return;
      }
      try {
        await api('POST', '/api/me/password', { currentPassword: data.get('currentPassword'), newPassword: data.get('newPassword') });
        onPasswordChanged();
      } catch (error) {
        passwordStatus.fail(error);
      }
    },
  },
  field('Current password', 'currentPassword', 'current-password'),
  field('New password', 'newPassword', 'new-password'),
  field('Repeat the new password', 'repeatPassword', 'new-password'),
  h('p', { class: 'help' }, 'At least 8 characters. Changing it signs you out everywhere, and OAuth tokens stop working; API keys keep working.'),
  h('button', { type: 'submit' }, 'Change password'),
  passwordStatus.element);

  page('Account', h('section', {},
    h('h1', {}, 'Account'),
    h('dl', { class: 'facts' },
      h('div', {}, h('dt', {}, 'Name'), h('dd', {}, me.name || '—')),
      h('div', {}, h('dt', {}, 'E-mail'), h('dd', {}, me.email)),
      h('div', {}, h('dt', {}, 'Plan'), h('dd', {}, me.plan)),
      h('div', {}, h('dt', {}, 'Role'), h('dd', {}, role)),
      h('div', {}, h('dt', {}, 'Storage'), h('dd', {}, storage(me)))),
    h('h2', {}, 'API key'),
    h('p', { class: 'help' }, 'Scripts and CI use it as the user name of HTTP Basic, with an empty password.'),
    h('div', { class: 'row' }, key, reveal, copy, regenerate),
    keyStatus.element,
    h('h2', {}, 'Password'),
    passwordForm));
}
