// Operators (role ADMIN): accounts and their plans, roles and status; the agents (device hosts)
// and their devices, which can be taken out of service and put back.

import { api } from '../api.js';
import { badge, bytes, field, h, statusLine, table, time } from '../dom.js';
import { page, poll } from '../page.js';
/** @import { ApiAgent, ApiList, ApiManagedUser, ApiUser } from '../../client/api-types.ts' */

const PLANS = ['PLATINUM', 'GOLD', 'SILVER'];
const ROLES = ['USER', 'ADMIN'];

/** Non-operators get a plain refusal without the page asking the API (which would answer 403). */
export function notForYouView() {
  page(
    'Operators',
    h('section', {}, h('h1', {}, 'Operators'), h('p', {}, 'This page is for operators of the cloud (the ADMIN role).')),
  );
}

/** @param {ApiUser} me the operator */
export async function adminView(me) {
  const status = statusLine();
  const usersBox = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const agentsBox = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  page(
    'Operators',
    h(
      'section',
      {},
      h('h1', {}, 'Operators'),
      status.element,
      h('h2', {}, 'Users'),
      usersBox,
      newUserForm(status, () => drawUsers()),
    ),
    h('section', {}, h('h2', {}, 'Agents and devices'), agentsBox),
  );

  /**
   * @param {ApiManagedUser} user
   * @param {Record<string, unknown>} changes
   * @param {(updated: ApiManagedUser) => string} done what to say once changed
   */
  async function change(user, changes, done) {
    try {
      const updated = await api('POST', `/api/admin/users/${user.id}`, changes);
      status.ok(done(updated));
      await drawUsers();
    } catch (error) {
      status.fail(error);
      await drawUsers();
    }
  }

  const drawUsers = () => poll(usersBox, renderUsers, 0);

  async function renderUsers() {
    /** @type {ApiList<ApiManagedUser>} */
    const users = await api('GET', '/api/admin/users');
    /**
     * @param {ApiManagedUser} user
     * @param {string} label
     * @param {string[]} values
     * @param {string} value
     * @param {'plan' | 'role'} name
     */
    const choice = (user, label, values, value, name) =>
      h(
        'select',
        {
          'aria-label': `${label} of ${user.email}`,
          onchange: (/** @type {Event} */ event) =>
            change(
              user,
              { [name]: /** @type {HTMLSelectElement} */ (event.target).value },
              (updated) => `${updated.email} now has the ${label.toLowerCase()} ${updated[name]}.`,
            ),
        },
        values.map((option) => h('option', { value: option, selected: option === value }, option)),
      );
    return table(
      'Users',
      ['User', 'Plan', 'Role', 'Status', 'Storage', 'Created', 'Last sign-in', 'Last run started'],
      users.data.map((user) => {
        const self = user.id === me.id;
        return h(
          'tr',
          {},
          h('td', { class: 'break' }, user.email, user.name ? h('span', { class: 'muted' }, ` ${user.name}`) : ''),
          h('td', {}, choice(user, 'Plan', PLANS, user.plan, 'plan')),
          h('td', {}, self ? user.role : choice(user, 'Role', ROLES, user.role, 'role')),
          h(
            'td',
            {},
            badge(user.status),
            ' ',
            self
              ? ''
              : h(
                  'button',
                  {
                    type: 'button',
                    class: user.enabled ? 'danger small' : 'small',
                    'data-key': `user-${user.id}-status`,
                    'aria-label': `${user.enabled ? 'Disable' : 'Enable'} ${user.email}`,
                    onclick: () => {
                      if (
                        user.enabled &&
                        !confirm(
                          `Disable ${user.email}? Their API key, tokens and sessions stop working until the account is enabled again.`,
                        )
                      )
                        return;
                      void change(
                        user,
                        { enabled: !user.enabled },
                        (updated) => `${updated.email} is ${updated.enabled ? 'enabled' : 'disabled'}.`,
                      );
                    },
                  },
                  user.enabled ? 'Disable' : 'Enable',
                ),
          ),
          // The quota is changed with devicecloud admin set-quota or POST /api/admin/users/{id}.
          h('td', {}, `${bytes(user.storageUsedBytes)} of ${bytes(user.storageQuotaBytes)}`),
          h('td', {}, time(user.createTime)),
          h('td', {}, time(user.lastLoginTime) || h('span', { class: 'muted' }, 'never')),
          h('td', {}, time(user.lastLaunchedTestTime) || h('span', { class: 'muted' }, 'never')),
        );
      }),
      { optional: [4, 5, 6, 7] },
    );
  }

  void drawUsers();

  async function renderAgents() {
    /** @type {ApiList<ApiAgent>} */
    const agents = await api('GET', '/api/admin/agents');
    if (agents.data.length === 0)
      return h(
        'p',
        { class: 'muted' },
        'No agents yet: create one with devicecloud admin create-agent-token and start it on a device host.',
      );
    return h(
      'div',
      {},
      agents.data.map((agent) =>
        h(
          'article',
          { class: 'agent' },
          h('h3', {}, agent.name),
          h(
            'p',
            { class: 'muted' },
            `${agent.hostname ?? 'not connected yet'}${agent.version ? ` · agent ${agent.version}` : ''} · last heard from ${agent.lastSeenTime ? time(agent.lastSeenTime) : 'never'} · ${agent.onlineDeviceCount} of ${agent.deviceCount} devices online`,
          ),
          table(
            `Devices of ${agent.name}`,
            ['Device', 'Serial', 'State', 'Why', 'Service'],
            agent.devices.map((device) =>
              h(
                'tr',
                {},
                h('td', {}, device.displayName),
                h('td', {}, h('code', {}, device.serial ?? '')),
                h(
                  'td',
                  {},
                  device.online ? badge(device.state) : badge('OFFLINE'),
                  device.enabled ? '' : [' ', badge('DISABLED')],
                ),
                h('td', {}, device.stateReason ?? ''),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: device.enabled ? 'danger small' : 'small',
                      'data-key': `device-${device.id}-service`,
                      'aria-label': `${device.enabled ? 'Take out of service' : 'Return to service'}: ${device.displayName} (${device.serial})`,
                      onclick: async () => {
                        try {
                          await api('POST', `/api/admin/devices/${device.id}`, { enabled: !device.enabled });
                          status.ok(
                            `${device.displayName} is ${device.enabled ? 'out of service: it takes no new runs' : 'back in service'}.`,
                          );
                          await poll(agentsBox, renderAgents, 0);
                        } catch (error) {
                          status.fail(error);
                        }
                      },
                    },
                    device.enabled ? 'Take out of service' : 'Return to service',
                  ),
                  // A device the cloud took out itself (cleaning failed) goes back to be cleaned again.
                  device.state === 'NOT_OPERATIONAL'
                    ? [
                        ' ',
                        h(
                          'button',
                          {
                            type: 'button',
                            class: 'small',
                            'data-key': `device-${device.id}-clean`,
                            'aria-label': `Clean again and return to service: ${device.displayName} (${device.serial})`,
                            onclick: async () => {
                              try {
                                await api('POST', `/api/admin/devices/${device.id}/return-to-service`, {});
                                status.ok(`${device.displayName} is being cleaned again; it takes work once clean.`);
                                await poll(agentsBox, renderAgents, 0);
                              } catch (error) {
                                status.fail(error);
                              }
                            },
                          },
                          'Clean again',
                        ),
                      ]
                    : '',
                ),
              ),
            ),
            { empty: 'No devices registered.', optional: [1] },
          ),
        ),
      ),
    );
  }

  void poll(agentsBox, renderAgents, 5000);
}

/**
 * @param {ReturnType<typeof statusLine>} status
 * @param {() => Promise<void>} onCreated
 */
function newUserForm(status, onCreated) {
  const form = h(
    'form',
    {
      class: 'grid-form',
      'aria-label': 'New user',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        const data = Object.fromEntries(new FormData(form));
        try {
          /** @type {ApiManagedUser} */
          const created = await api('POST', '/api/admin/users', data);
          form.reset();
          status.ok(
            `Created ${created.email} (${created.plan}). They sign in with the password you chose and find their API key in their account.`,
          );
          await onCreated();
        } catch (error) {
          status.fail(error);
        }
      },
    },
    h('h3', {}, 'New user'),
    field('E-mail', h('input', { name: 'email', type: 'email', required: true, autocomplete: 'off' })),
    field(
      'First password',
      h('input', { name: 'password', type: 'password', required: true, minlength: 8, autocomplete: 'new-password' }),
    ),
    field('First name', h('input', { name: 'firstName', autocomplete: 'off' })),
    field('Last name', h('input', { name: 'lastName', autocomplete: 'off' })),
    field(
      'Plan',
      h(
        'select',
        { name: 'plan' },
        PLANS.map((plan) => h('option', { value: plan, selected: plan === 'SILVER' }, plan)),
      ),
    ),
    field(
      'Role',
      h(
        'select',
        { name: 'role' },
        ROLES.map((role) => h('option', { value: role }, role)),
      ),
    ),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: 'primary' }, 'Create user')),
  );
  return form;
}
