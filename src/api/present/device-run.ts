import { type Step, deviceRunDuration, legacyRunStatus } from '../../domain/runs.ts';
import type { DeviceRunView } from '../../services/views.ts';
import { type PresentContext, userPath } from './context.ts';
import { presentDevice } from './device.ts';
import { type Rep, rep } from './representation.ts';

/** The legacy "device run" view of a device session. */
export function presentDeviceRun(view: DeviceRunView, context: PresentContext): Rep {
  const { deviceRun: run, device } = view;
  const status = legacyRunStatus(run.state);
  return rep('apiDeviceRun', {
    id: run.id,
    selfURI: `${userPath(context)}/projects/${run.projectId}/runs/${run.testRunId}/device-runs/${run.id}`,
    deviceSessionId: run.id,
    device: presentDevice(device),
    deviceName: device.displayName,
    softwareVersion: rep('apiSoftwareVersion', { releaseVersion: device.releaseVersion, apiLevel: device.apiLevel }),
    runStatus: status,
    currentState: rep('apiDeviceRunState', {
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
  return rep('apiDeviceSession', {
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
  return rep('apiDeviceSessionStep', {
    id: step.id,
    type: step.type,
    startTimeMS: step.startTime,
    finishTimeMS: step.finishTime,
    failReason: step.failReason,
  });
}

/** The legacy `/states` timeline entry. */
export function presentLegacyState(step: Step, status: string): Rep {
  return rep('apiDeviceRunState', {
    id: step.id,
    deviceRunId: step.deviceRunId,
    startTimeMS: step.startTime,
    finishTimeMS: step.finishTime,
    status,
    deviceRunStateType: step.type,
  });
}
