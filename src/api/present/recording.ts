import type { RecorderAuthorization, RecordingStep } from '../../domain/recordings.ts';
import { UNAUTHORIZED_STEP_LIMIT } from '../../domain/recordings.ts';
import type { RecordingView } from '../../services/recordings.ts';
import { type PresentContext, userPath } from './context.ts';
import Type from 'typebox';
import { Bool, Count, Id, MaybeStr, MaybeTime, SelfURI, Str, Time } from './fields.ts';
import { Nullable, type Rep, entity, entitySchema } from './representation.ts';

export const ApiRecording = entitySchema('apiRecording', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  osType: MaybeStr,
  state: Str,
  authorized: Bool,
  stepCount: Count,
  stepLimit: Nullable(Type.Integer({ description: 'Steps an unauthorized recording may have; null: no limit' })),
  createTime: Time,
  endTime: MaybeTime,
});

export const ApiRecordingStep = entitySchema('apiRecordingStep', {
  position: Count,
  action: Str,
  target: MaybeStr,
  value: MaybeStr,
  time: Time,
});

export const ApiRecorderAuthorization = entitySchema('apiRecorderAuthorization', {
  id: Id,
  createTime: Time,
  endTime: MaybeTime,
});

/** The answer that created the authorization: the only one with its token. */
export const ApiNewRecorderAuthorization = entitySchema(
  'apiRecorderAuthorization',
  { id: Id, token: Type.String({ description: 'Shown only here' }), createTime: Time, endTime: MaybeTime },
  { title: 'apiNewRecorderAuthorization' },
);

export function presentRecording({ recording, authorized }: RecordingView, context: PresentContext): Rep {
  return entity(ApiRecording, {
    id: recording.id,
    selfURI: `${userPath(context)}/recordings/${recording.id}`,
    name: recording.name,
    osType: recording.osType,
    state: recording.state,
    authorized,
    stepCount: recording.stepCount,
    // null: no limit.
    stepLimit: authorized ? null : UNAUTHORIZED_STEP_LIMIT,
    createTime: recording.createTime,
    endTime: recording.endTime,
  });
}

export function presentRecordingStep(step: RecordingStep): Rep {
  return entity(ApiRecordingStep, {
    position: step.position,
    action: step.action,
    target: step.target,
    value: step.value,
    time: step.time,
  });
}

/** The token appears only in the answer that created it. */
export function presentRecorderAuthorization(authorization: RecorderAuthorization, token?: string): Rep {
  const { id, createTime, endTime } = authorization;
  return token === undefined
    ? entity(ApiRecorderAuthorization, { id, createTime, endTime })
    : entity(ApiNewRecorderAuthorization, { id, token, createTime, endTime });
}
