/** Devices (anonymous, like the real service's device list) and the user's device groups. */
import Type from 'typebox';
import { DEVICE_GROUP_LIST, DEVICE_LIST } from '../../domain/devices.ts';
import {
  addGroupDevices,
  createGroup,
  deleteGroup,
  getDevice,
  getGroup,
  groupDevices,
  listDevices,
  listGroups,
  removeGroupDevice,
  renameGroup,
} from '../../services/devices.ts';
import { ApiDevice, ApiDeviceGroup, presentDevice, presentDeviceGroup } from '../present/device.ts';
import { itemList, listSchema, storedList } from '../present/list.ts';
import { type RouteSpec, created, noContent, ok, page, route, whole } from '../route.ts';
import { NoInput, Text } from '../schemas.ts';

const TAGS = ['Devices'];
const DeviceList = listSchema(ApiDevice);
const GROUP = '/me/device-groups/:groupId';
/** A group's devices, on every field they show; by name, as the device list. */
const GROUP_DEVICES = itemList(ApiDevice, {
  entity: 'devices',
  sort: [{ field: 'displayName', direction: 'asc', caseInsensitive: true }],
  search: ['displayName', 'manufacturer'],
});

export const deviceRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/devices',
    summary: 'List the devices of the cloud (no sign-in needed)',
    tags: TAGS,
    answers: { 200: DeviceList },
    access: 'anonymous',
    list: storedList(DEVICE_LIST, [
      'selfURI',
      'locked',
      'lockReason',
      'deviceGroupOrigin',
      'available',
      'accountId',
      'mainUserEmail',
      'imagePrefix',
      'imageTop',
      'imageLeft',
      'imageWidth',
      'imageHeight',
      'frameExtraWidth',
      'frame80Url',
      'frame100Url',
      'frame160Url',
      'frame400Url',
      'supportedCreators',
      'browsers',
      'properties',
    ]),
    handle: async ({ ctx, list }) => {
      const found = await listDevices(ctx, list);
      return page(found.items.map(presentDevice), found.total);
    },
  }),
  route({
    method: 'GET',
    path: '/devices/:deviceId',
    summary: 'Read a device (no sign-in needed)',
    tags: TAGS,
    answers: { 200: ApiDevice },
    access: 'anonymous',
    handle: async ({ ctx, params }) => ok(presentDevice(await getDevice(ctx, params.deviceId))),
  }),
  route({
    method: 'GET',
    path: '/me/device-groups',
    summary: "List the user's device groups (withPublic=true adds the service's public groups)",
    tags: TAGS,
    answers: { 200: listSchema(ApiDeviceGroup) },
    input: Type.Object({ withPublic: Type.Optional(Type.Boolean()) }),
    list: storedList(DEVICE_GROUP_LIST, ['selfURI', 'deviceCount', 'userEmail', 'shared', 'isPublic', 'creditsPrice']),
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
      summary: 'List the devices of a group',
      tags: TAGS,
      answers: { 200: DeviceList },
      list: GROUP_DEVICES,
      handle: async ({ ctx, user, params }) =>
        whole((await groupDevices(ctx, user, params.groupId)).map(presentDevice)),
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
