/**
 * The account pages' records (docs/api.md#account-pages), shaped as the public clients' models:
 * APINotification, APIUserPreference, APIUserStatistics, APIDeviceUsage and APIEnum.
 */
import Type from 'typebox';
import type { DeviceUsage, UserStatistics } from '../../domain/account-figures.ts';
import { successRatio } from '../../domain/account-figures.ts';
import type { Device } from '../../domain/devices.ts';
import type { Preferences } from '../../domain/preferences.ts';
import type { NotificationRecord } from '../../services/account.ts';
import { type PresentContext, userPath } from './context.ts';
import { ApiDevice, presentDevice } from './device.ts';
import { Count, Id, MaybeStr, Ratio, SelfURI, Str, Time } from './fields.ts';
import { Nested, Nullable, type Rep, entity, entitySchema } from './representation.ts';

export const ApiNotification = entitySchema('apiNotification', {
  id: Id,
  selfURI: SelfURI,
  channel: Type.String({ description: 'EMAIL, SLACK or WEBHOOK' }),
  destination: Type.String({ description: 'An e-mail address, or the URL posted to' }),
  scope: Type.String({ description: 'ALL, TEST_RUN, TEST_RUN_FAILURE or TEST_RUN_SUCCEEDED' }),
  projectId: Nullable(Type.Integer({ minimum: 1, description: 'null: every project' })),
  projectName: MaybeStr,
  userId: Id,
  userEmail: MaybeStr,
  createTime: Time,
});

export function presentNotification(notification: NotificationRecord, context: PresentContext): Rep {
  return entity(ApiNotification, {
    id: notification.id,
    selfURI: `${userPath(context)}/notifications/${notification.id}`,
    channel: notification.channel,
    destination: notification.destination,
    scope: notification.scope,
    projectId: notification.projectId,
    projectName: notification.projectName,
    userId: notification.userId,
    userEmail: context.user?.email ?? null,
    createTime: notification.createTime,
  });
}

export const ApiUserPreference = entitySchema('apiUserPreference', {
  id: Id,
  selfURI: SelfURI,
  testTimeout: Type.Integer({ description: 'Seconds: the timeout of runs started without one' }),
  defaultTestTimeout: Type.Integer(),
  httpSessionMaxInactiveInterval: Type.Integer({ description: 'Seconds a dashboard sign-in lasts' }),
  defaultHttpSessionMaxInactiveInterval: Type.Integer(),
});

export function presentPreferences(preferences: Preferences, context: PresentContext): Rep {
  return entity(ApiUserPreference, {
    id: context.user!.id,
    selfURI: `${userPath(context)}/preferences`,
    ...preferences,
  });
}

export const ApiUserStatistics = entitySchema('apiUserStatistics', {
  id: Id,
  selfURI: SelfURI,
  totalTestRuns: Count,
  runningTestRuns: Count,
  devicesUsed: Count,
  overallTestCaseSuccessRatio: Ratio,
  totalDeviceSessions: Count,
  succeededDeviceSessions: Count,
  failedDeviceSessions: Count,
  totalTestCases: Count,
  passedTestCases: Count,
  failedTestCases: Count,
  deviceTime: Type.Integer({ minimum: 0, description: 'Milliseconds of device time' }),
  allTimeProjects: Count,
  additionalUsers: Count,
});

export function presentStatistics(statistics: UserStatistics, context: PresentContext): Rep {
  return entity(ApiUserStatistics, {
    id: context.user!.id,
    selfURI: `${userPath(context)}/statistics`,
    totalTestRuns: statistics.totalTestRuns,
    runningTestRuns: statistics.runningTestRuns,
    devicesUsed: statistics.devicesUsed,
    overallTestCaseSuccessRatio: successRatio(statistics.passedTestCases, statistics.totalTestCases),
    totalDeviceSessions: statistics.totalDeviceSessions,
    succeededDeviceSessions: statistics.succeededDeviceSessions,
    failedDeviceSessions: statistics.failedDeviceSessions,
    totalTestCases: statistics.totalTestCases,
    passedTestCases: statistics.passedTestCases,
    failedTestCases: statistics.failedTestCases,
    deviceTime: statistics.deviceTime,
    allTimeProjects: statistics.allTimeProjects,
    // One user per account: an account has no users besides its owner.
    additionalUsers: 0,
  });
}

export const ApiDeviceUsageDay = entitySchema('apiDeviceUsageDay', {
  day: Type.Integer({ description: 'UTC midnight of the day the sessions started, epoch ms' }),
  deviceSessions: Count,
  deviceTime: Type.Integer({ minimum: 0, description: 'Milliseconds' }),
});

export const ApiDeviceUsage = entitySchema('apiDeviceUsage', {
  id: Id,
  selfURI: SelfURI,
  device: Nested(ApiDevice),
  totalDeviceSessions: Count,
  failedDeviceSessions: Count,
  deviceTime: Type.Integer({ minimum: 0, description: 'Milliseconds' }),
  days: Type.Array(Nested(ApiDeviceUsageDay)),
});

export function presentDeviceUsage(usage: DeviceUsage, device: Device, context: PresentContext): Rep {
  return entity(ApiDeviceUsage, {
    id: usage.deviceId,
    selfURI: `${userPath(context)}/device-usage`,
    device: presentDevice(device),
    totalDeviceSessions: usage.totalDeviceSessions,
    failedDeviceSessions: usage.failedDeviceSessions,
    deviceTime: usage.deviceTime,
    days: usage.days.map((day) => entity(ApiDeviceUsageDay, { ...day })),
  });
}

export const ApiEnum = entitySchema('apiEnum', {
  id: Type.Integer({ minimum: 0, description: 'The position of the value in its enum' }),
  selfURI: Nullable(Str),
  value: Str,
});

export function presentEnum(value: string, index: number): Rep {
  return entity(ApiEnum, { id: index, selfURI: null, value });
}
