/**
 * The lists across all of a user's runs (`/me/runs`, `/me/device-sessions`): the fields of a
 * project's run list and of a run's device-run list, and what each item belongs to.
 */
import type { FieldSpec, ListSpec } from './list-query.ts';
import { OS_TYPES } from './projects.ts';
import { DEVICE_RUN_LIST, LEGACY_RUN_STATUSES, RETRY_STATES, RUN_LIST } from './runs.ts';

/** A run's counters over its current device runs and their test cases, as the run shows them. */
export const RUN_COUNT_FIELDS = [
  'waitingDeviceCount',
  'runningDeviceCount',
  'finishedDeviceCount',
  'succeededDeviceCount',
  'failedDeviceCount',
  'warningDeviceCount',
  'errorsDeviceCount',
  'excludedDeviceCount',
  'abortedDeviceCount',
  'timeoutedDeviceCount',
  'totalDeviceCount',
  'testCaseCount',
  'executedTestCaseCount',
  'successfulTestCaseCount',
  'failedTestCaseCount',
] as const;
export type RunCountField = (typeof RUN_COUNT_FIELDS)[number];

/**
 * A user's runs across all their projects (`/me/runs`): a project's run fields, and which project
 * and framework each belongs to. Newest first, as a project's list.
 */
export const USER_RUN_LIST: ListSpec<
  | keyof (typeof RUN_LIST)['fields']
  | 'projectId'
  | 'projectName'
  | 'frameworkId'
  | 'frameworkName'
  | 'osType'
  | 'startedById'
  | 'userId'
  | 'deviceCount'
  | 'executionRatio'
  | 'successRatio'
  | RunCountField
  | 'startedByDisplayName'
  | 'billable'
  | 'logsFileId'
  | 'screenshotsFileId'
  | 'queuePosition'
> = {
  entity: 'test runs',
  fields: {
    ...RUN_LIST.fields,
    projectId: { type: 'number' },
    projectName: { type: 'string' },
    frameworkId: { type: 'number' },
    frameworkName: { type: 'string' },
    osType: { type: 'enum', values: OS_TYPES },
    startedById: { type: 'number' },
    userId: { type: 'number' },
    deviceCount: { type: 'number' },
    executionRatio: { type: 'decimal' },
    successRatio: { type: 'decimal' },
    ...(Object.fromEntries(RUN_COUNT_FIELDS.map((field) => [field, { type: 'number' }])) as Record<
      RunCountField,
      FieldSpec
    >),
    startedByDisplayName: { type: 'string' },
    billable: { type: 'boolean' },
    logsFileId: { type: 'number' },
    screenshotsFileId: { type: 'number' },
    // Seen now: where its best-placed waiting device run stands on its device (null when none waits).
    queuePosition: { type: 'number' },
  },
  defaultSort: RUN_LIST.defaultSort,
};

/**
 * A user's device sessions across all their runs (`/me/device-sessions`): a run's device-run fields,
 * and the run, project and device each belongs to. Newest first, unlike one run's (creation order).
 */
export const USER_DEVICE_SESSION_LIST: ListSpec<
  | keyof (typeof DEVICE_RUN_LIST)['fields']
  | 'installTime'
  | 'timeLimit'
  | 'testCaseAllCount'
  | 'testCasePassedCount'
  | 'testCaseFailedCount'
  | 'testCaseSkippedCount'
  | 'retryState'
  | 'autoRetriesLeftCount'
  | 'testRunId'
  | 'projectId'
  | 'userId'
  | 'deviceName'
  | 'successRatio'
  | 'deviceRunId'
  | 'deviceSessionId'
  | 'testCaseSuccessCount'
  | 'testCaseAllNo'
  | 'testCaseSuccessNo'
  | 'testCasePassedNo'
  | 'testCaseFailedNo'
  | 'testCaseSkippedNo'
  | 'testCaseCount'
  | 'type'
  | 'userEmail'
  | 'testRunName'
  | 'projectName'
  | 'accountId'
  | 'deviceInstanceId'
  | 'name'
  | 'duration'
  | 'deviceTime'
  | 'billable'
  | 'config'
  | 'clientSideId'
  | 'externalId'
  | 'deviceLogFirstTimestamp'
  | 'retryable'
  | 'biometricInstrumentation'
  | 'abortTime'
> = {
  entity: 'device sessions',
  fields: {
    ...DEVICE_RUN_LIST.fields,
    installTime: { type: 'date' },
    timeLimit: { type: 'number' },
    testCaseAllCount: { type: 'number' },
    testCasePassedCount: { type: 'number' },
    testCaseFailedCount: { type: 'number' },
    testCaseSkippedCount: { type: 'number' },
    retryState: { type: 'enum', values: RETRY_STATES },
    autoRetriesLeftCount: { type: 'number' },
    testRunId: { type: 'number' },
    projectId: { type: 'number' },
    userId: { type: 'number' },
    deviceName: { type: 'string' },
    successRatio: { type: 'decimal' },
    // The names the clients' models give the same values (the legacy device run's and the session's).
    deviceRunId: { type: 'number' },
    deviceSessionId: { type: 'number' },
    testCaseSuccessCount: { type: 'number' },
    testCaseAllNo: { type: 'number' },
    testCaseSuccessNo: { type: 'number' },
    testCasePassedNo: { type: 'number' },
    testCaseFailedNo: { type: 'number' },
    testCaseSkippedNo: { type: 'number' },
    testCaseCount: { type: 'number' },
    type: { type: 'string' },
    userEmail: { type: 'string' },
    testRunName: { type: 'string' },
    projectName: { type: 'string' },
    accountId: { type: 'number' },
    deviceInstanceId: { type: 'number' },
    name: { type: 'string' },
    // Milliseconds so far while the session runs, as shown.
    duration: { type: 'number' },
    deviceTime: { type: 'number' },
    billable: { type: 'boolean' },
    // Kept for the clients, always null here: `isnull` finds every session.
    config: { type: 'string' },
    clientSideId: { type: 'string' },
    externalId: { type: 'string' },
    deviceLogFirstTimestamp: { type: 'date' },
    retryable: { type: 'boolean' },
    biometricInstrumentation: { type: 'boolean' },
    abortTime: { type: 'date' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};

/**
 * One project's runs take the fields of a user's list of runs (docs/api.md#lists); one run's
 * device sessions those of a user's list of them, in creation order by default.
 */
export const PROJECT_RUN_LIST = USER_RUN_LIST;
export const RUN_DEVICE_SESSION_LIST: typeof USER_DEVICE_SESSION_LIST = {
  ...USER_DEVICE_SESSION_LIST,
  defaultSort: DEVICE_RUN_LIST.defaultSort,
};

/** The legacy view of a run's device runs (`…/device-runs`): also its own names of the status and time. */
export const RUN_DEVICE_RUN_LIST: ListSpec<
  keyof (typeof USER_DEVICE_SESSION_LIST)['fields'] | 'runStatus' | 'runTime' | 'interruptedByState'
> = {
  ...RUN_DEVICE_SESSION_LIST,
  fields: {
    ...RUN_DEVICE_SESSION_LIST.fields,
    runStatus: { type: 'enum', values: LEGACY_RUN_STATUSES },
    runTime: { type: 'number' },
    interruptedByState: { type: 'string' },
  },
};

/** Every field a list of device runs may be filtered on, whichever view lists them. */
export type DeviceRunListField = keyof (typeof RUN_DEVICE_RUN_LIST)['fields'];
