/**
 * Labels and device selection (docs/api.md#device-selection): the label groups and labels of the
 * fleet and a device's labels (public, like the device list), the device picker's filters, and the
 * selectors of the user's device groups.
 */
import Type from 'typebox';
import { LABEL_GROUP_LIST, LABEL_LIST } from '../../domain/labels.ts';
import {
  addSelectors,
  deviceFilters,
  deviceProperties,
  getLabel,
  getLabelGroup,
  groupSelector,
  groupSelectors,
  listLabelGroups,
  listLabels,
  removeSelector,
} from '../../services/labels.ts';
import { ApiDeviceGroup, presentDeviceGroup } from '../present/device.ts';
import {
  ApiDevicePicker,
  ApiDeviceProperty,
  ApiDevicePropertyList,
  ApiLabelGroup,
  presentDevicePicker,
  presentLabel,
  presentLabelGroup,
} from '../present/label.ts';
import { listSchema, storedList } from '../present/list.ts';
import { type RouteSpec, created, noContent, ok, page, route } from '../route.ts';
import { NoInput } from '../schemas.ts';

const TAGS = ['Devices'];
const GROUP = '/me/device-groups/:groupId';

export const labelRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/label-groups',
    summary: 'List the label groups devices are labelled in (no sign-in needed)',
    tags: TAGS,
    answers: { 200: listSchema(ApiLabelGroup) },
    access: 'anonymous',
    list: storedList(LABEL_GROUP_LIST, ['selfURI']),
    handle: async ({ ctx, list }) => {
      const found = await listLabelGroups(ctx, list);
      return page(found.items.map(presentLabelGroup), found.total);
    },
  }),
  route({
    method: 'GET',
    path: '/label-groups/:labelGroupId',
    summary: 'Read a label group (no sign-in needed)',
    tags: TAGS,
    answers: { 200: ApiLabelGroup },
    access: 'anonymous',
    handle: async ({ ctx, params }) => ok(presentLabelGroup(await getLabelGroup(ctx, params.labelGroupId))),
  }),
  route({
    method: 'GET',
    path: '/label-groups/:labelGroupId/labels',
    summary: 'List the labels of a label group (no sign-in needed)',
    tags: TAGS,
    answers: { 200: ApiDevicePropertyList },
    access: 'anonymous',
    list: storedList(LABEL_LIST, ['selfURI']),
    handle: async ({ ctx, params, list }) => {
      const found = await listLabels(ctx, list, params.labelGroupId);
      return page(found.items.map(presentLabel), found.total);
    },
  }),
  route({
    method: 'GET',
    path: '/label-groups/:labelGroupId/labels/:labelId',
    summary: 'Read a label (no sign-in needed)',
    tags: TAGS,
    answers: { 200: ApiDeviceProperty },
    access: 'anonymous',
    handle: async ({ ctx, params }) => ok(presentLabel(await getLabel(ctx, params.labelGroupId, params.labelId))),
  }),
  route({
    method: 'GET',
    path: '/labels',
    summary: 'List the labels of every label group (no sign-in needed)',
    tags: TAGS,
    answers: { 200: ApiDevicePropertyList },
    access: 'anonymous',
    list: storedList(LABEL_LIST, ['selfURI']),
    handle: async ({ ctx, list }) => {
      const found = await listLabels(ctx, list);
      return page(found.items.map(presentLabel), found.total);
    },
  }),
  route({
    method: 'GET',
    path: '/devices/filters',
    summary: 'The device picker: the labels devices carry, by label group (no sign-in needed)',
    tags: TAGS,
    answers: { 200: ApiDevicePicker },
    access: 'anonymous',
    handle: async ({ ctx }) => {
      const { groups, labels } = await deviceFilters(ctx);
      return ok(presentDevicePicker(groups, labels));
    },
  }),
  route({
    method: 'GET',
    path: '/devices/:deviceId/properties',
    summary: "List a device's labels (no sign-in needed)",
    tags: TAGS,
    answers: { 200: ApiDevicePropertyList },
    access: 'anonymous',
    list: storedList(LABEL_LIST, ['selfURI']),
    handle: async ({ ctx, params, list }) => {
      const found = await deviceProperties(ctx, params.deviceId, list);
      return page(found.items.map(presentLabel), found.total);
    },
  }),
  ...[GROUP, '/device-groups/:groupId'].flatMap((path) => [
    route({
      method: 'GET',
      path: `${path as typeof GROUP}/selectors`,
      summary: "List a device group's selectors: the labels it takes devices by",
      tags: TAGS,
      answers: { 200: ApiDevicePropertyList },
      list: storedList(LABEL_LIST, ['selfURI']),
      handle: async ({ ctx, user, params, list }) => {
        const found = await groupSelectors(ctx, user, params.groupId, list);
        return page(found.items.map(presentLabel), found.total);
      },
    }),
    route({
      method: 'POST',
      path: `${path as typeof GROUP}/selectors`,
      summary: 'Add selectors to a device group: it then takes every device carrying those labels, now or later',
      tags: TAGS,
      answers: { 201: ApiDeviceGroup },
      input: Type.Object({
        selectorIds: Type.Optional(
          Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000, description: 'Label ids (GET /labels)' }),
        ),
        selectorId: Type.Optional(Type.Integer({ minimum: 1, description: 'One label id' })),
      }),
      handle: async ({ ctx, user, params, input, present }) => {
        const ids = [...(input.selectorIds ?? []), ...(input.selectorId === undefined ? [] : [input.selectorId])];
        return created(presentDeviceGroup(await addSelectors(ctx, user, params.groupId, ids), present));
      },
    }),
    route({
      method: 'GET',
      path: `${path as typeof GROUP}/selectors/:labelId`,
      summary: "Read one of a device group's selectors",
      tags: TAGS,
      answers: { 200: ApiDeviceProperty },
      handle: async ({ ctx, user, params }) =>
        ok(presentLabel(await groupSelector(ctx, user, params.groupId, params.labelId))),
    }),
    route({
      method: 'DELETE',
      path: `${path as typeof GROUP}/selectors/:labelId`,
      summary: 'Remove a selector from a device group: the devices it alone took leave the group',
      tags: TAGS,
      answers: { 204: 'empty' },
      input: NoInput,
      handle: async ({ ctx, user, params }) => {
        await removeSelector(ctx, user, params.groupId, params.labelId);
        return noContent();
      },
    }),
  ]),
];
