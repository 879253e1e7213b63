/**
 * What the account pages add up from a user's runs (docs/api.md#account-pages): the statistics of
 * `/me/statistics` and the device usage of `/me/device-usage`. Counted over current device runs
 * (a retried session is replaced by its new one), and over runs begun in an optional period.
 */
import { InvalidParameterError } from './errors.ts';
import type { ListSpec } from './list-query.ts';

export const DAY_MS = 86_400_000;

/** Device runs in these states count as failed sessions (a timeout is a failure to the user). */
export const FAILED_SESSION_STATES = ['FAILED', 'TIMEOUT'] as const;

/** `[from, to)` in epoch ms; either end may be open. */
export interface Period {
  readonly from: number | null;
  readonly to: number | null;
}

export interface UserStatistics {
  readonly totalTestRuns: number;
  /** Runs not finished yet: waiting for devices or running. */
  readonly runningTestRuns: number;
  readonly devicesUsed: number;
  readonly totalDeviceSessions: number;
  readonly succeededDeviceSessions: number;
  readonly failedDeviceSessions: number;
  readonly totalTestCases: number;
  readonly passedTestCases: number;
  readonly failedTestCases: number;
  /** Milliseconds devices spent on the user's sessions. */
  readonly deviceTime: number;
  /** The user's projects now, whatever the period. */
  readonly allTimeProjects: number;
}

export interface DeviceUsageDay {
  /** UTC midnight of the day the sessions started. */
  readonly day: number;
  readonly deviceSessions: number;
  readonly deviceTime: number;
}

export interface DeviceUsage {
  readonly deviceId: number;
  readonly totalDeviceSessions: number;
  readonly failedDeviceSessions: number;
  readonly deviceTime: number;
  readonly days: readonly DeviceUsageDay[];
}

/** Passed test cases over all that ran, 0..1; 0 when none ran. */
export function successRatio(passed: number, all: number): number {
  return all === 0 ? 0 : passed / all;
}

/** `startTime` / `endTime` query parameters (epoch ms) as a period; a 400 names a bad one. */
export function parsePeriod(raw: { startTime?: unknown; endTime?: unknown }): Period {
  const bound = (name: 'startTime' | 'endTime'): number | null => {
    const value = raw[name];
    if (value === undefined || value === '') return null;
    const number = typeof value === 'number' ? value : Number(String(value));
    if (!Number.isSafeInteger(number) || number < 0)
      throw new InvalidParameterError(name, `Parameter '${name}' must be a time in epoch milliseconds`);
    return number;
  };
  const period = { from: bound('startTime'), to: bound('endTime') };
  if (period.from !== null && period.to !== null && period.to < period.from)
    throw new InvalidParameterError('endTime', `Parameter 'endTime' must not be before 'startTime'`);
  return period;
}

/** The list grammar's fields of `/me/device-usage`. */
export const DEVICE_USAGE_LIST: ListSpec<
  'id' | 'deviceName' | 'totalDeviceSessions' | 'failedDeviceSessions' | 'deviceTime'
> = {
  entity: 'device usage',
  fields: {
    id: { type: 'number' },
    deviceName: { type: 'string' },
    totalDeviceSessions: { type: 'number' },
    failedDeviceSessions: { type: 'number' },
    deviceTime: { type: 'number' },
  },
  defaultSort: [{ field: 'deviceTime', direction: 'desc' }],
};
