import type { RecorderAuthorization, RecordingStep } from '../../domain/recordings.ts';
import { UNAUTHORIZED_STEP_LIMIT } from '../../domain/recordings.ts';
import type { RecordingView } from '../../services/recordings.ts';
import { type PresentContext, userPath } from './context.ts';
import { type Rep, rep } from './representation.ts';

export function presentRecording({ recording, authorized }: RecordingView, context: PresentContext): Rep {
  return rep('apiRecording', {
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
  return rep('apiRecordingStep', { position: step.position, action: step.action, target: step.target, value: step.value, time: step.time });
}

/** The token appears only in the answer that created it. */
export function presentRecorderAuthorization(authorization: RecorderAuthorization, token?: string): Rep {
  return rep('apiRecorderAuthorization', {
    id: authorization.id,
    ...(token !== undefined && { token }),
    createTime: authorization.createTime,
    endTime: authorization.endTime,
  });
}
