/**
 * The account pages the public clients call (docs/api.md#account-pages): notification
 * subscriptions, preferences, statistics, device usage and the enums.
 */
import Type from 'typebox';
import { DEVICE_USAGE_LIST, parsePeriod } from '../../domain/account-figures.ts';
import { DEVICE_OS_TYPES, DEVICE_STATES } from '../../domain/devices.ts';
import { FILE_DIRECTIONS, FILE_INPUT_TYPES, FILE_STATES } from '../../domain/files.ts';
import { NOTIFICATION_CHANNELS, NOTIFICATION_LIST, NOTIFICATION_SCOPES } from '../../domain/notifications.ts';
import { ARCHIVING_STRATEGIES, OS_TYPES, PROJECT_TYPES } from '../../domain/projects.ts';
import { DEVICE_RUN_STATES, TEST_RUN_STATES } from '../../domain/runs.ts';
import { TEST_CASE_RESULTS } from '../../domain/test-cases.ts';
import { PLANS, USER_STATUSES } from '../../domain/users.ts';
import {
  createNotification,
  deleteNotification,
  getNotification,
  getPreferences,
  getStatistics,
  listDeviceUsage,
  listNotifications,
  testNotification,
  updateNotification,
  updatePreferences,
} from '../../services/account.ts';
import {
  ApiDeviceUsage,
  ApiEnum,
  ApiNotification,
  ApiUserPreference,
  ApiUserStatistics,
  presentDeviceUsage,
  presentEnum,
  presentNotification,
  presentPreferences,
  presentStatistics,
} from '../present/account.ts';
import { itemList, listSchema, storedList } from '../present/list.ts';
import { entity, entitySchema } from '../present/representation.ts';
import { type RouteSpec, created, noContent, ok, page, route, whole } from '../route.ts';
import { NoInput, Scalar, Text } from '../schemas.ts';

const TAGS = ['Account'];

const NotificationInput = Type.Object({
  channel: Type.Optional(Text('EMAIL, SLACK or WEBHOOK', 100)),
  destination: Type.Optional(Text('An e-mail address (EMAIL) or an http(s) URL (SLACK, WEBHOOK)', 2000)),
  scope: Type.Optional(Text('ALL, TEST_RUN, TEST_RUN_FAILURE or TEST_RUN_SUCCEEDED', 100)),
  projectId: Type.Optional(Scalar('Only runs of this project (absent or 0: every project)')),
});

const PeriodInput = {
  startTime: Type.Optional(Scalar('Only runs begun at or after this time, epoch ms')),
  endTime: Type.Optional(Scalar('Only runs begun before this time, epoch ms')),
};

const STRINGS = Type.Array(Type.String());

/** Every enum the API's records and parameters use, by name (docs/api.md#enums). */
const ENUMS = {
  notificationChannels: NOTIFICATION_CHANNELS,
  notificationScopes: NOTIFICATION_SCOPES,
  osTypes: OS_TYPES,
  deviceOsTypes: DEVICE_OS_TYPES,
  deviceStates: DEVICE_STATES,
  projectTypes: PROJECT_TYPES,
  archivingStrategies: ARCHIVING_STRATEGIES,
  testRunStates: TEST_RUN_STATES,
  deviceRunStates: DEVICE_RUN_STATES,
  testCaseResults: TEST_CASE_RESULTS,
  fileInputTypes: FILE_INPUT_TYPES,
  fileDirections: FILE_DIRECTIONS,
  fileStates: FILE_STATES,
  plans: PLANS,
  userStatuses: USER_STATUSES,
} as const;

const ApiEnums = entitySchema(
  'apiEnums',
  Object.fromEntries(Object.keys(ENUMS).map((name) => [name, STRINGS])) as Record<keyof typeof ENUMS, typeof STRINGS>,
);

function enumList(values: readonly string[]) {
  return values.map((value, index) => presentEnum(value, index));
}

export const accountRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/notifications',
    summary: 'List your notification subscriptions',
    tags: TAGS,
    answers: { 200: listSchema(ApiNotification) },
    list: storedList(NOTIFICATION_LIST, ['selfURI']),
    handle: async ({ ctx, user, present, list }) => {
      const found = await listNotifications(ctx, user, list);
      return page(
        found.items.map((item) => presentNotification(item, present)),
        found.total,
      );
    },
  }),
  route({
    method: 'POST',
    path: '/me/notifications',
    summary: 'Subscribe an e-mail address, a Slack webhook or a webhook to run events',
    tags: TAGS,
    answers: { 201: ApiNotification },
    input: NotificationInput,
    handle: async ({ ctx, user, input, present }) =>
      created(presentNotification(await createNotification(ctx, user, input), present)),
  }),
  route({
    method: 'GET',
    path: '/me/notifications/scopes',
    summary: 'The scopes a notification may have',
    tags: TAGS,
    answers: { 200: listSchema(ApiEnum) },
    list: itemList(ApiEnum, { entity: 'notification scopes', sort: [], search: ['value'] }),
    handle: async () => whole(enumList(NOTIFICATION_SCOPES)),
  }),
  route({
    method: 'GET',
    path: '/me/notifications/channels',
    summary: 'The channels a notification may use',
    tags: TAGS,
    answers: { 200: listSchema(ApiEnum) },
    list: itemList(ApiEnum, { entity: 'notification channels', sort: [], search: ['value'] }),
    handle: async () => whole(enumList(NOTIFICATION_CHANNELS)),
  }),
  route({
    method: 'GET',
    path: '/me/notifications/:notificationId',
    summary: 'Read a notification subscription',
    tags: TAGS,
    answers: { 200: ApiNotification },
    handle: async ({ ctx, user, params, present }) =>
      ok(presentNotification(await getNotification(ctx, user, params.notificationId), present)),
  }),
  route({
    method: 'POST',
    path: '/me/notifications/:notificationId',
    summary: 'Change a notification subscription (the fields sent)',
    tags: TAGS,
    answers: { 200: ApiNotification },
    input: NotificationInput,
    handle: async ({ ctx, user, params, input, present }) =>
      ok(presentNotification(await updateNotification(ctx, user, params.notificationId, input), present)),
  }),
  route({
    method: 'DELETE',
    path: '/me/notifications/:notificationId',
    summary: 'Remove a notification subscription',
    tags: TAGS,
    answers: { 204: 'empty' },
    input: NoInput,
    handle: async ({ ctx, user, params }) => {
      await deleteNotification(ctx, user, params.notificationId);
      return noContent();
    },
  }),
  route({
    method: 'POST',
    path: '/me/notifications/:notificationId/test',
    summary: 'Send a test message to the subscription’s destination now',
    tags: TAGS,
    answers: { 200: ApiNotification },
    input: NoInput,
    handle: async ({ ctx, user, params, present }) =>
      ok(presentNotification(await testNotification(ctx, user, params.notificationId), present)),
  }),
  route({
    method: 'GET',
    path: '/me/preferences',
    summary: 'Your preferences',
    tags: TAGS,
    answers: { 200: ApiUserPreference },
    handle: async ({ ctx, user, present }) => ok(presentPreferences(await getPreferences(ctx, user), present)),
  }),
  route({
    method: 'POST',
    path: '/me/preferences',
    summary: 'Change your preferences (testTimeout)',
    tags: TAGS,
    answers: { 200: ApiUserPreference },
    input: Type.Object({
      testTimeout: Type.Optional(Scalar('Seconds: the timeout of runs started without one')),
      httpSessionMaxInactiveInterval: Type.Optional(Scalar('Read-only here: may be sent back unchanged')),
      defaultTestTimeout: Type.Optional(Scalar('Read-only, ignored')),
      defaultHttpSessionMaxInactiveInterval: Type.Optional(Scalar('Read-only, ignored')),
      id: Type.Optional(Scalar('Read-only, ignored')),
    }),
    handle: async ({ ctx, user, input, present }) =>
      ok(presentPreferences(await updatePreferences(ctx, user, input), present)),
  }),
  route({
    method: 'GET',
    path: '/me/statistics',
    summary: 'Your runs, device sessions and test cases, counted',
    tags: TAGS,
    answers: { 200: ApiUserStatistics },
    input: Type.Object(PeriodInput),
    handle: async ({ ctx, user, input, present }) =>
      ok(presentStatistics(await getStatistics(ctx, user, parsePeriod(input)), present)),
  }),
  route({
    method: 'GET',
    path: '/me/device-usage',
    summary: 'Device time and sessions per device you used, with the time per day',
    tags: TAGS,
    answers: { 200: listSchema(ApiDeviceUsage) },
    input: Type.Object(PeriodInput),
    list: storedList(DEVICE_USAGE_LIST, ['selfURI']),
    handle: async ({ ctx, user, input, present, list }) => {
      const period = parsePeriod(input);
      const found = await listDeviceUsage(ctx, user, period, list);
      const extra: Record<string, string> = {};
      if (period.from !== null) extra.startTime = String(period.from);
      if (period.to !== null) extra.endTime = String(period.to);
      return page(
        found.items.map(({ usage, device }) => presentDeviceUsage(usage, device, present)),
        found.total,
        extra,
      );
    },
  }),
  route({
    method: 'GET',
    path: '/enums',
    summary: 'The values of every enum the API uses, by name',
    tags: TAGS,
    answers: { 200: ApiEnums },
    handle: async () =>
      ok(
        entity(
          ApiEnums,
          Object.fromEntries(Object.entries(ENUMS).map(([name, values]) => [name, [...values]])) as never,
        ),
      ),
  }),
];
