/**
 * A run's steps, what results its device sessions have, and a session's connections
 * (docs/api.md#steps-and-data-availability), in the shapes of the public clients' models.
 */
import Type from 'typebox';
import type { DataAvailability, RunStep } from '../../domain/run-progress.ts';
import { STEP_TYPES } from '../../domain/runs.ts';
import type { RunDataAvailability } from '../../services/run-progress.ts';
import { type PresentContext, userPath } from './context.ts';
import { AlwaysNull, Bool, Count, Id, MaybeStr, MaybeTime, SelfURI, Str, Time } from './fields.ts';
import { Nested, Nullable, type Rep, entity, entitySchema } from './representation.ts';

/** A step of the run as a whole; its fields are those of a session's step where they mean the same. */
export const ApiTestRunStep = entitySchema('apiTestRunStep', {
  id: Type.Integer({ minimum: 1, description: 'The position of its type in the timeline, from 1' }),
  selfURI: AlwaysNull,
  testRunId: Id,
  type: Str,
  startTimeMS: Time,
  finishTimeMS: MaybeTime,
  failReason: MaybeStr,
  deviceSessionCount: Count,
  finishedDeviceSessionCount: Count,
});

export const ApiDeviceSessionDataAvailability = entitySchema('apiDeviceSessionDataAvailability', {
  id: Id,
  selfURI: AlwaysNull,
  deviceRunId: Id,
  logs: Bool,
  performance: Bool,
  screenshots: Bool,
  video: Bool,
  buildLogs: Bool,
  resultsDataZip: Bool,
});

export const ApiTestRunDataAvailability = entitySchema('apiTestRunDataAvailability', {
  id: Id,
  selfURI: SelfURI,
  testRunId: Id,
  deviceRunDataAvailabilities: Type.Array(Nested(ApiDeviceSessionDataAvailability)),
});

/** The JS client's `Connection` and the Java client's `APIConnection`: none are open here (services/run-progress.ts). */
export const ApiConnection = entitySchema('apiConnection', {
  id: Id,
  selfURI: Nullable(SelfURI),
  deviceSessionId: Id,
  type: Str,
  url: Str,
  urlSchema: Str,
  host: Str,
  port: Nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
  path: MaybeStr,
  password: MaybeStr,
  externalId: MaybeStr,
  createTime: Time,
  endTime: MaybeTime,
});

export function presentRunStep(runId: number, step: RunStep): Rep {
  return entity(ApiTestRunStep, {
    id: STEP_TYPES.indexOf(step.type) + 1,
    selfURI: null,
    testRunId: runId,
    type: step.type,
    startTimeMS: step.startTime,
    finishTimeMS: step.finishTime,
    failReason: step.failReason,
    deviceSessionCount: step.deviceSessionCount,
    finishedDeviceSessionCount: step.finishedDeviceSessionCount,
  });
}

function presentSessionAvailability(availability: DataAvailability): Rep {
  return entity(ApiDeviceSessionDataAvailability, { id: availability.deviceRunId, selfURI: null, ...availability });
}

export function presentRunDataAvailability(view: RunDataAvailability, context: PresentContext): Rep {
  return entity(ApiTestRunDataAvailability, {
    id: view.runId,
    selfURI: `${userPath(context)}/projects/${view.projectId}/runs/${view.runId}/data-availability`,
    testRunId: view.runId,
    deviceRunDataAvailabilities: view.sessions.map(presentSessionAvailability),
  });
}
