/** Devices (anonymous, like the real service's device list) and the user's device groups. */
import Type from 'typebox';
import { DEVICE_GROUP_LIST, DEVICE_LIST } from '../../domain/devices.ts';
import {
  addGroupDevices,
  createGroup,
  deleteGroup,
  getDevice,
  getGroup,
  listDevices,
  listGroups,
  removeGroupDevice,
  renameGroup,
} from '../../services/devices.ts';
import { ApiDevice, ApiDeviceGroup, presentDevice, presentDeviceGroup } from '../present/device.ts';
import { itemList, listSchema, storedList } from '../present/list.ts';
import { type RouteSpec, created, noContent, ok, page, route, whole } from '../route.ts';
import { NoInput, Text } from '../schemas.ts';
import { groupMembers, propertiesOf, requireLabels } from '../../services/labels.ts';
import type { Context } from '../../services/context.ts';
import type { Device } from '../../domain/devices.ts';

/** `withProperties=true` embeds each device's labels (docs/api.md#device-selection). */
const WithProperties = { withProperties: Type.Optional(Type.Boolean()) };

/** The labels of `devices` when the request asked for them, else nothing to embed. */
async function labelsFor(ctx: Context, devices: readonly Device[], wanted: boolean | undefined) {
  return wanted === true
    ? propertiesOf(
        ctx,
        devices.map((device) => device.id),
      )
    : undefined;
}

const TAGS = ['Devices'];
const DeviceList = listSchema(ApiDevice);
const GROUP = '/me/device-groups/:groupId';
/** What a device shows that is not a value: its labels (a list of their own), browsers and availability. */
const DEVICE_NESTED = ['properties', 'browsers', 'availability'];
/** A group's devices, on every field they show; by name, as the device list. */
const GROUP_DEVICES = itemList(ApiDevice, {
  entity: 'devices',
  sort: [{ field: 'displayName', direction: 'asc', caseInsensitive: true }],
  search: ['displayName', 'manufacturer'],
  shownOnly: DEVICE_NESTED,
});

export const deviceRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/devices',
    summary: 'List the devices of the cloud (no sign-in needed)',
    tags: TAGS,
    answers: { 200: DeviceList },
    access: 'anonymous',
    input: Type.Object({
      ...WithProperties,
      labelIds: Type.Optional(
        Type.Array(Type.Integer({ minimum: 1 }), {
          maxItems: 1000,
          description: 'Only devices carrying one of these labels in each label group named',
        }),
      ),
    }),
    list: storedList(DEVICE_LIST, ['selfURI', ...DEVICE_NESTED]),
    handle: async ({ ctx, input, list }) => {
      const labelIds = input.labelIds ?? [];
      if (labelIds.length > 0) await requireLabels(ctx, 'labelIds', labelIds);
      const found = await listDevices(ctx, list, labelIds);
      const labels = await labelsFor(ctx, found.items, input.withProperties);
      const extra = {
        ...(labelIds.length > 0 && { labelIds: labelIds.join(',') }),
        ...(input.withProperties === true && { withProperties: 'true' }),
      };
      return page(
        found.items.map((device) => presentDevice(device, { properties: labels?.get(device.id) })),
        found.total,
        extra,
      );
    },
  }),
  route({
    method: 'GET',
    path: '/devices/:deviceId',
    summary: 'Read a device (no sign-in needed)',
    tags: TAGS,
    answers: { 200: ApiDevice },
    access: 'anonymous',
    input: Type.Object(WithProperties),
    handle: async ({ ctx, params, input }) => {
      const device = await getDevice(ctx, params.deviceId);
      const labels = await labelsFor(ctx, [device], input.withProperties);
      return ok(presentDevice(device, { properties: labels?.get(device.id) }));
    },
  }),
  route({
    method: 'GET',
    path: '/me/device-groups',
    summary: "List the user's device groups (withPublic=true adds the service's public groups)",
    tags: TAGS,
    answers: { 200: listSchema(ApiDeviceGroup) },
    input: Type.Object({ withPublic: Type.Optional(Type.Boolean()) }),
    list: storedList(DEVICE_GROUP_LIST, ['selfURI']),
    handle: async ({ ctx, user, input, list, present }) => {
      const withPublic = input.withPublic === true;
      const found = await listGroups(ctx, user, withPublic, list);
      return page(
        found.items.map((group) => presentDeviceGroup(group, present)),
        found.total,
        withPublic ? { withPublic: 'true' } : undefined,
      );
    },
  }),
  route({
    method: 'POST',
    path: '/me/device-groups',
    summary: 'Create a device group',
    tags: TAGS,
    answers: { 201: ApiDeviceGroup },
    input: Type.Object({
      displayName: Type.Optional(Text('Group name', 1000)),
      osType: Type.Optional(Text('ANDROID or IOS', 20)),
    }),
    handle: async ({ ctx, user, input, present }) =>
      created(presentDeviceGroup(await createGroup(ctx, user, input), present)),
  }),
  ...[GROUP, '/device-groups/:groupId'].flatMap((path) => [
    route({
      method: 'GET',
      path: path as typeof GROUP,
      summary: 'Read a device group',
      tags: TAGS,
      answers: { 200: ApiDeviceGroup },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentDeviceGroup(await getGroup(ctx, user, params.groupId), present)),
    }),
    route({
      method: 'POST',
      path: path as typeof GROUP,
      summary: 'Rename a device group',
      tags: TAGS,
      answers: { 200: ApiDeviceGroup },
      input: Type.Object({ displayName: Type.Optional(Text('Group name', 1000)) }),
      handle: async ({ ctx, user, params, input, present }) =>
        ok(presentDeviceGroup(await renameGroup(ctx, user, params.groupId, input), present)),
    }),
    route({
      method: 'DELETE',
      path: path as typeof GROUP,
      summary: 'Delete a device group',
      tags: TAGS,
      answers: { 204: 'empty' },
      input: NoInput,
      handle: async ({ ctx, user, params }) => {
        await deleteGroup(ctx, user, params.groupId);
        return noContent();
      },
    }),
    route({
      method: 'GET',
      path: `${path as typeof GROUP}/devices`,
      summary: 'List the devices of a group: those added to it and those its selectors take',
      tags: TAGS,
      answers: { 200: DeviceList },
      input: Type.Object(WithProperties),
      list: GROUP_DEVICES,
      handle: async ({ ctx, user, params, input }) => {
        const members = await groupMembers(ctx, user, params.groupId);
        const labels = await labelsFor(
          ctx,
          members.map((member) => member.device),
          input.withProperties,
        );
        return whole(
          members.map(({ device, origin }) => presentDevice(device, { origin, properties: labels?.get(device.id) })),
          input.withProperties === true ? { withProperties: 'true' } : undefined,
        );
      },
    }),
    route({
      method: 'POST',
      path: `${path as typeof GROUP}/devices`,
      summary: 'Add devices to a group',
      tags: TAGS,
      answers: { 201: ApiDeviceGroup },
      input: Type.Object({
        deviceId: Type.Optional(Type.Integer({ minimum: 1 })),
        deviceIds: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 10000 })),
      }),
      handle: async ({ ctx, user, params, input, present }) => {
        const ids = [...(input.deviceIds ?? []), ...(input.deviceId === undefined ? [] : [input.deviceId])];
        return created(presentDeviceGroup(await addGroupDevices(ctx, user, params.groupId, ids), present));
      },
    }),
    route({
      method: 'DELETE',
      path: `${path as typeof GROUP}/devices/:deviceId`,
      summary: 'Remove a device from a group',
      tags: TAGS,
      answers: { 204: 'empty' },
      input: NoInput,
      handle: async ({ ctx, user, params }) => {
        await removeGroupDevice(ctx, user, params.groupId, params.deviceId);
        return noContent();
      },
    }),
  ]),
];
