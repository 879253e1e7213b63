// The devices of the cloud with their state and health (live), and the user's device groups:
// create, rename, choose devices, delete. The service's public groups are shown, not editable.
// Each device is a tile; a busy one running a session the user may see shows its newest picture
// (docs/api.md#device-screens), refreshed with the tiles while the tab is shown (page.js poll).

import { api } from '../api.js';
import { badge, field, h, statusLine, table } from '../dom.js';
import { current, page, poll } from '../page.js';
import { osOf } from './runs.js';
/** @import { ApiDevice, ApiDeviceGroup, ApiDeviceScreen, ApiList } from '../../client/api-types.ts' */

/** How often the tiles look again: often enough to follow a session, cheap (pictures load only when new). */
const TILES_EVERY_MS = 2000;

/**
 * What a device is doing and how healthy it is, in the words of the device list.
 * @param {ApiDevice} device
 */
export function condition(device) {
  if (!device.enabled) return { state: 'DISABLED', health: 'Taken out of service by an operator' };
  if (!device.online) return { state: 'OFFLINE', health: 'Its host has not reported it lately' };
  if (device.lockReason === 'NOT_OPERATIONAL')
    return { state: 'NOT_OPERATIONAL', health: device.stateReason ?? 'Out of service until an operator acts' };
  if (device.lockReason === 'TESTING') return { state: 'TESTING', health: 'Healthy; running a test' };
  if (device.lockReason === 'CLEANING') return { state: 'CLEANING', health: 'Healthy; being cleaned for the next run' };
  return { state: 'IDLE', health: 'Healthy; ready for a run' };
}

/**
 * One device's tile: its name, OS and state; when it runs a session the user may see, the
 * session's newest picture (another's session: busy, no picture), linked to the session.
 * @param {ApiDevice} device
 * @param {ApiDeviceScreen | undefined} screen
 */
function tile(device, screen) {
  const { state, health } = condition(device);
  const href =
    screen === undefined
      ? null
      : screen.type === 'MANUAL'
        ? `#/live/${screen.deviceSessionId}`
        : `#/device-sessions/${screen.deviceSessionId}`;
  const picture =
    screen?.picture == null
      ? h('span', { class: 'device-tile-screen muted' }, screen === undefined ? '' : 'No picture yet')
      : h('img', { class: 'device-tile-screen', src: screen.picture, alt: `The screen of ${device.displayName}` });
  return h(
    'li',
    { class: `device-tile tile-${state}`, title: health, 'data-device-id': device.id },
    href === null
      ? picture
      : h('a', { href, 'aria-label': `The session on ${device.displayName}`, class: 'device-tile-link' }, picture),
    h('span', { class: 'device-tile-name' }, device.displayName),
    h('span', { class: 'muted' }, osOf(device)),
    badge(state),
  );
}

export async function devicesView() {
  const devicesBox = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const groupsBox = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const status = statusLine();
  const name = h('input', { name: 'displayName', required: true, maxlength: 255, autocomplete: 'off' });
  const os = h(
    'select',
    { name: 'osType' },
    h('option', { value: 'ANDROID' }, 'Android'),
    h('option', { value: 'IOS' }, 'iOS'),
  );
  const form = h(
    'form',
    {
      class: 'inline-form',
      'aria-label': 'New device group',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        try {
          /** @type {ApiDeviceGroup} */
          const group = await api('POST', '/api/me/device-groups', { displayName: name.value, osType: os.value });
          location.hash = `#/groups/${group.id}`;
        } catch (error) {
          status.fail(error);
        }
      },
    },
    field('Group name', name),
    field('OS', os),
    h('button', { type: 'submit' }, 'Create group'),
  );

  page(
    'Devices',
    h('section', {}, h('h1', {}, 'Devices'), devicesBox),
    h('section', {}, h('h2', {}, 'Device groups'), groupsBox, h('h3', {}, 'New group'), form, status.element),
  );

  void poll(
    devicesBox,
    async () => {
      /** @type {[ApiList<ApiDevice>, ApiList<ApiDeviceScreen>]} */
      const [devices, screens] = await Promise.all([
        api('GET', '/api/v2/devices?limit=0&sort=displayName_a'),
        api('GET', '/api/me/device-screens?limit=0'),
      ]);
      const screenOf = new Map(screens.data.map((screen) => [screen.deviceId, screen]));
      const grid = h(
        'ul',
        { class: 'device-grid', 'aria-label': 'Device thumbnails' },
        devices.data.map((device) => tile(device, screenOf.get(device.id))),
      );
      const list = table(
        'Devices',
        ['Device', 'OS', 'State', 'Health', 'Interactive'],
        devices.data.map((device) => {
          const { state, health } = condition(device);
          return h(
            'tr',
            {},
            h('td', {}, device.displayName),
            h('td', {}, osOf(device)),
            h('td', {}, badge(state)),
            h('td', {}, health),
            h(
              'td',
              {},
              device.enabled
                ? h(
                    'a',
                    { href: `#/live/new/${device.id}`, 'aria-label': `Use ${device.displayName} live` },
                    'Use live',
                  )
                : '',
            ),
          );
        }),
        { empty: 'No devices yet: start an agent on a device host.' },
      );
      return h('div', {}, devices.data.length > 0 ? grid : '', list);
    },
    TILES_EVERY_MS,
  );

  void poll(
    groupsBox,
    async () => {
      /** @type {ApiList<ApiDeviceGroup>} */
      const groups = await api('GET', '/api/me/device-groups?withPublic=true&limit=0&sort=displayName_a');
      return table(
        'Device groups',
        ['Group', 'OS', 'Devices', 'Owner'],
        groups.data.map((group) =>
          h(
            'tr',
            {},
            h('td', {}, h('a', { href: `#/groups/${group.id}` }, group.displayName)),
            h('td', {}, group.osType === 'IOS' ? 'iOS' : 'Android'),
            h('td', {}, group.deviceCount),
            h('td', {}, group.isPublic ? 'The service (everyone)' : 'You'),
          ),
        ),
      );
    },
    10000,
  );
}

/** @param {string} groupId */
export async function groupView(groupId) {
  const shown = page(
    'Device group',
    h('section', {}, h('h1', {}, 'Device group'), h('p', { class: 'muted' }, 'Loading…')),
  );
  const path = `/api/me/device-groups/${groupId}`;
  /** @type {[ApiDeviceGroup, ApiList<ApiDevice>, ApiList<ApiDevice>]} */
  const [group, members, devices] = await Promise.all([
    api('GET', path),
    api('GET', `${path}/devices`),
    api('GET', '/api/v2/devices?limit=0&sort=displayName_a'),
  ]);
  if (shown !== current()) return;
  const status = statusLine();
  const crumbs = h('nav', { 'aria-label': 'Breadcrumb', class: 'crumbs' }, h('a', { href: '#/devices' }, 'Devices'));
  const memberIds = new Set(members.data.map((device) => device.id));

  if (group.isPublic) {
    page(
      group.displayName,
      h(
        'section',
        {},
        crumbs,
        h('h1', {}, group.displayName),
        h('p', { class: 'muted' }, 'A group of the service: every device of its OS, kept up to date by the service.'),
        table(
          'Devices in the group',
          ['Device', 'OS', 'State'],
          members.data.map((device) =>
            h(
              'tr',
              {},
              h('td', {}, device.displayName),
              h('td', {}, osOf(device)),
              h('td', {}, badge(condition(device).state)),
            ),
          ),
        ),
      ),
    );
    return;
  }

  const heading = h('h1', {}, group.displayName);
  const count = h('span', {}, `${memberIds.size}`);
  const rename = h('input', {
    name: 'displayName',
    value: group.displayName,
    required: true,
    maxlength: 255,
    autocomplete: 'off',
  });
  const renameForm = h(
    'form',
    {
      class: 'inline-form',
      'aria-label': 'Rename the group',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        try {
          /** @type {ApiDeviceGroup} */
          const renamed = await api('POST', path, { displayName: rename.value });
          heading.textContent = renamed.displayName;
          document.title = `${renamed.displayName} · devicecloud`;
          status.ok(`Renamed to ${renamed.displayName}.`);
        } catch (error) {
          status.fail(error);
        }
      },
    },
    field('Name', rename),
    h('button', { type: 'submit' }, 'Rename'),
  );

  const candidates = devices.data.filter((device) => device.osType === group.osType);
  const choices = h(
    'fieldset',
    { class: 'choices' },
    h('legend', {}, 'Devices in the group (', count, ')'),
    candidates.length === 0
      ? h('p', { class: 'muted' }, `No ${group.osType === 'IOS' ? 'iOS' : 'Android'} devices in the cloud yet.`)
      : '',
    candidates.map((device) => {
      const box = h('input', {
        type: 'checkbox',
        name: 'device',
        value: device.id,
        checked: memberIds.has(device.id),
        onchange: async () => {
          box.disabled = true;
          try {
            if (box.checked) await api('POST', `${path}/devices`, { deviceIds: [device.id] });
            else await api('DELETE', `${path}/devices/${device.id}`);
            if (box.checked) memberIds.add(device.id);
            else memberIds.delete(device.id);
            count.textContent = `${memberIds.size}`;
            status.ok(`${box.checked ? 'Added' : 'Removed'} ${device.displayName}.`);
          } catch (error) {
            box.checked = !box.checked;
            status.fail(error);
          } finally {
            box.disabled = false;
          }
        },
      });
      return h(
        'label',
        { class: 'choice' },
        box,
        ` ${device.displayName} `,
        h('span', { class: 'muted' }, `${osOf(device)} · `),
        badge(condition(device).state),
      );
    }),
  );

  const remove = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      onclick: async () => {
        if (!confirm(`Delete the group ${heading.textContent}? Runs already started keep their devices.`)) return;
        try {
          await api('DELETE', path);
          location.hash = '#/devices';
        } catch (error) {
          status.fail(error);
        }
      },
    },
    'Delete group',
  );

  page(
    group.displayName,
    h('section', {}, crumbs, heading, renameForm, choices, status.element, h('div', { class: 'row' }, remove)),
  );
}
