import { type Step, deviceRunDuration, legacyRunStatus } from '../../domain/runs.ts';
import type { DeviceRunView } from '../../services/views.ts';
import { type PresentContext, userPath } from './context.ts';
import Type from 'typebox';
import { ApiDevice, ApiSoftwareRelease, presentDevice } from './device.ts';
import { Count, Id, MaybeStr, MaybeTime, Ratio, SelfURI, Str, Time, Url } from './fields.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

export const ApiDeviceRunState = entitySchema('apiDeviceRunState', {
  id: Id,
  deviceRunId: Id,
  startTimeMS: MaybeTime,
  finishTimeMS: MaybeTime,
  status: Str,
  deviceRunStateType: MaybeStr,
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
});

export const ApiDeviceSessionStep = entitySchema('apiDeviceSessionStep', {
  id: Id,
  type: Str,
  startTimeMS: Time,
  finishTimeMS: MaybeTime,
  failReason: MaybeStr,
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
      deviceRunId: run.id,
      startTimeMS: run.currentStepStartTime,
      finishTimeMS: null,
      status,
      deviceRunStateType: run.currentStep,
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
    type: 'AUTOMATIC',
    uiLink: `${context.baseUrl}/#/projects/${run.projectId}/runs/${run.testRunId}/device-sessions/${run.id}`,
  });
}

export function presentStep(step: Step): Rep {
  return entity(ApiDeviceSessionStep, {
    id: step.id,
    type: step.type,
    startTimeMS: step.startTime,
    finishTimeMS: step.finishTime,
    failReason: step.failReason,
  });
}

/** The legacy `/states` timeline entry. */
export function presentLegacyState(step: Step, status: string): Rep {
  return entity(ApiDeviceRunState, {
    id: step.id,
    deviceRunId: step.deviceRunId,
    startTimeMS: step.startTime,
    finishTimeMS: step.finishTime,
    status,
    deviceRunStateType: step.type,
  });
}
