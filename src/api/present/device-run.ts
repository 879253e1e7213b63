import { type Step, deviceRunDuration, legacyRunStatus, whyNotRetryable } from '../../domain/runs.ts';
import type { DeviceRunView } from '../../services/views.ts';
import { type PresentContext, userPath } from './context.ts';
import Type from 'typebox';
import { ApiDevice, ApiSoftwareRelease, presentDevice } from './device.ts';
import {
  AlwaysNull,
  Bool,
  Count,
  Id,
  MaybeStr,
  MaybeTime,
  Ratio,
  RowIndex,
  SelfURI,
  Str,
  Time,
  Url,
} from './fields.ts';
import { Nested, Nullable, type Rep, entity, entitySchema } from './representation.ts';

export const ApiDeviceRunState = entitySchema('apiDeviceRunState', {
  id: Id,
  selfURI: AlwaysNull,
  deviceRunId: Id,
  startTimeMS: MaybeTime,
  finishTimeMS: MaybeTime,
  status: Str,
  deviceRunStateType: MaybeStr,
  failReason: MaybeStr,
  retryTime: AlwaysNull,
});

const Duration = Type.Integer({ minimum: 0, description: 'Milliseconds' });

export const ApiDeviceRun = entitySchema('apiDeviceRun', {
  id: Id,
  selfURI: SelfURI,
  deviceSessionId: Id,
  device: Nested(ApiDevice),
  deviceName: Str,
  softwareVersion: Nested(ApiSoftwareRelease),
  runStatus: Str,
  currentState: Nested(ApiDeviceRunState),
  excludeReason: MaybeStr,
  createTime: Time,
  startTime: MaybeTime,
  runTime: Duration,
  testCaseAllNo: Count,
  testCaseSuccessNo: Count,
  testCasePassedNo: Count,
  testCaseFailedNo: Count,
  testCaseSkippedNo: Count,
  testCaseCount: Count,
  interruptedByState: AlwaysNull,
  testRunId: Id,
  projectId: Id,
});

export const ApiDeviceSession = entitySchema('apiDeviceSession', {
  id: Id,
  selfURI: SelfURI,
  device: Nested(ApiDevice),
  state: Str,
  excludeReason: MaybeStr,
  createTime: Time,
  installTime: MaybeTime,
  startTime: MaybeTime,
  endTime: MaybeTime,
  abortTime: MaybeTime,
  duration: Duration,
  timeLimit: Type.Integer({ minimum: 0, description: 'Seconds' }),
  testCaseAllCount: Count,
  testCasePassedCount: Count,
  testCaseFailedCount: Count,
  testCaseSkippedCount: Count,
  successRatio: Ratio,
  retryState: Str,
  autoRetriesLeftCount: Count,
  testRunId: Id,
  projectId: Id,
  type: Str,
  uiLink: Url,
  testRunName: Str,
  projectName: Str,
  userId: Id,
  userEmail: MaybeStr,
  accountId: Id,
  deviceRunId: Id,
  deviceInstanceId: Id,
  name: Str,
  testCaseSuccessCount: Count,
  deviceTime: Duration,
  billable: Bool,
  config: AlwaysNull,
  clientSideId: AlwaysNull,
  externalId: AlwaysNull,
  deviceLogFirstTimestamp: AlwaysNull,
  retryable: Type.Boolean({ description: 'POST …/retry would start it again (neither waiting nor excluded)' }),
  biometricInstrumentation: Bool,
  rowIndex: RowIndex,
  video: Nullable(Type.String({ description: 'Absolute URL of the video of the session; null when it has none' })),
});

export const ApiDeviceSessionStep = entitySchema('apiDeviceSessionStep', {
  id: Id,
  selfURI: AlwaysNull,
  deviceSessionId: Id,
  type: Str,
  startTimeMS: Time,
  finishTimeMS: MaybeTime,
  failReason: MaybeStr,
  excludeReason: AlwaysNull,
});

/** The legacy "device run" view of a device session. */
export function presentDeviceRun(view: DeviceRunView, context: PresentContext): Rep {
  const { deviceRun: run, device } = view;
  const status = legacyRunStatus(run.state);
  return entity(ApiDeviceRun, {
    id: run.id,
    selfURI: `${userPath(context)}/projects/${run.projectId}/runs/${run.testRunId}/device-runs/${run.id}`,
    deviceSessionId: run.id,
    device: presentDevice(device),
    deviceName: device.displayName,
    softwareVersion: entity(ApiSoftwareRelease, { releaseVersion: device.releaseVersion, apiLevel: device.apiLevel }),
    runStatus: status,
    currentState: entity(ApiDeviceRunState, {
      id: run.id,
      selfURI: null,
      deviceRunId: run.id,
      startTimeMS: run.currentStepStartTime,
      finishTimeMS: null,
      status,
      deviceRunStateType: run.currentStep,
      // The step under way has not failed; a state is never retried on its own (retryTime).
      failReason: null,
      retryTime: null,
    }),
    excludeReason: run.excludeReason,
    createTime: run.createTime,
    startTime: run.startTime,
    runTime: deviceRunDuration(run, context.now),
    testCaseAllNo: run.testCaseAllCount,
    testCaseSuccessNo: run.testCasePassedCount,
    testCasePassedNo: run.testCasePassedCount,
    testCaseFailedNo: run.testCaseFailedCount,
    testCaseSkippedNo: run.testCaseSkippedCount,
    testCaseCount: run.testCaseAllCount,
    // An interruption (abort, timeout) shows in runStatus and the states, not as a state of its own.
    interruptedByState: null,
    testRunId: run.testRunId,
    projectId: run.projectId,
  });
}

/** The modern "device session" view. */
export function presentDeviceSession(view: DeviceRunView, context: PresentContext): Rep {
  const { deviceRun: run, device } = view;
  const executed = run.testCasePassedCount + run.testCaseFailedCount;
  return entity(ApiDeviceSession, {
    id: run.id,
    selfURI: `${userPath(context)}/device-sessions/${run.id}`,
    device: presentDevice(device),
    state: run.state,
    excludeReason: run.excludeReason,
    createTime: run.createTime,
    installTime: run.installTime,
    startTime: run.startTime,
    endTime: run.endTime,
    abortTime: run.state === 'ABORTED' ? run.endTime : null,
    duration: deviceRunDuration(run, context.now),
    timeLimit: run.timeLimit,
    testCaseAllCount: run.testCaseAllCount,
    testCasePassedCount: run.testCasePassedCount,
    testCaseFailedCount: run.testCaseFailedCount,
    testCaseSkippedCount: run.testCaseSkippedCount,
    successRatio: executed === 0 ? 0 : run.testCasePassedCount / executed,
    retryState: run.retryState,
    autoRetriesLeftCount: run.autoRetriesLeftCount,
    testRunId: run.testRunId,
    projectId: run.projectId,
    type: run.frameworkKind === 'interactive' ? 'MANUAL' : 'AUTOMATIC',
    uiLink: `${context.baseUrl}/#/projects/${run.projectId}/runs/${run.testRunId}/device-sessions/${run.id}`,
    testRunName: view.testRunName,
    projectName: view.projectName,
    userId: run.userId,
    userEmail: view.userEmail,
    // One user per account; the device session is the device run, on the device itself.
    accountId: run.userId,
    deviceRunId: run.id,
    deviceInstanceId: device.id,
    name: device.displayName,
    testCaseSuccessCount: run.testCasePassedCount,
    // Device time as used; nothing is billed here.
    deviceTime: deviceRunDuration(run, context.now),
    billable: false,
    // Client-side ids and device log offsets do not exist here.
    config: null,
    clientSideId: null,
    externalId: null,
    deviceLogFirstTimestamp: null,
    retryable: whyNotRetryable(run) === null,
    // No biometric prompts are instrumented here.
    biometricInstrumentation: false,
    rowIndex: null,
    // docs/api.md#videos: the session's recording, downloadable (with ranges) like any output file.
    video:
      view.videoFileId === null
        ? null
        : `${context.baseUrl}/api/v2/device-sessions/${run.id}/output-file-set/files/${view.videoFileId}/file`,
  });
}

export function presentStep(step: Step): Rep {
  return entity(ApiDeviceSessionStep, {
    id: step.id,
    selfURI: null,
    deviceSessionId: step.deviceRunId,
    type: step.type,
    startTimeMS: step.startTime,
    finishTimeMS: step.finishTime,
    failReason: step.failReason,
    // Why a device run was excluded is on the device run itself (`excludeReason`).
    excludeReason: null,
  });
}

/** The legacy `/states` timeline entry. */
export function presentLegacyState(step: Step, status: string): Rep {
  return entity(ApiDeviceRunState, {
    id: step.id,
    // A state has no resource of its own, as a session's steps.
    selfURI: null,
    deviceRunId: step.deviceRunId,
    startTimeMS: step.startTime,
    finishTimeMS: step.finishTime,
    status,
    deviceRunStateType: step.type,
    failReason: step.failReason,
    retryTime: null,
  });
}
