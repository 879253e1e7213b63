/**
 * The recorder tool (docs/api.md#recorder-tool): a recorder client records a test as steps. Without an
 * authorization a recording is cut at 30 steps; an authorized one is unlimited. An account holds
 * one authorization at a time: authorizing a recorder ends the previous authorization, and
 * recordings made under it continue as unauthorized ones (so a token handed to a second machine
 * cannot run beside the first).
 */
import { ConflictError, ForbiddenError, InvalidParameterError } from './errors.ts';
import type { ListSpec } from './list-query.ts';
import { checkEnum, checkText } from './text.ts';
import { asText } from './values.ts';

export const UNAUTHORIZED_STEP_LIMIT = 30;

export const RECORDING_STATES = ['RECORDING', 'FINISHED', 'CUT'] as const;
export type RecordingState = (typeof RECORDING_STATES)[number];

/** What a recorder can capture; free-form detail goes in `target` and `value`. */
export const STEP_ACTIONS = [
  'TAP',
  'LONG_TAP',
  'SWIPE',
  'TYPE',
  'BACK',
  'HOME',
  'WAIT',
  'ASSERT',
  'SCREENSHOT',
  'LAUNCH',
] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];

export interface RecorderAuthorization {
  readonly id: number;
  readonly userId: number;
  readonly createTime: number;
  /** Set when the account authorized another recorder, or ended this one. */
  readonly endTime: number | null;
}

export interface Recording {
  readonly id: number;
  readonly userId: number;
  readonly name: string;
  readonly osType: 'ANDROID' | 'IOS' | null;
  readonly authorizationId: number | null;
  readonly state: RecordingState;
  readonly stepCount: number;
  readonly createTime: number;
  readonly endTime: number | null;
}

export interface RecordingStep {
  readonly position: number;
  readonly action: StepAction;
  readonly target: string | null;
  readonly value: string | null;
  readonly time: number;
}

export type NewStep = Omit<RecordingStep, 'position' | 'time'>;

export const RECORDING_LIST: ListSpec<
  'id' | 'name' | 'state' | 'createTime' | 'osType' | 'stepCount' | 'endTime' | 'authorized' | 'stepLimit'
> = {
  entity: 'recordings',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    state: { type: 'enum', values: RECORDING_STATES },
    createTime: { type: 'date' },
    osType: { type: 'string' },
    stepCount: { type: 'number' },
    endTime: { type: 'date' },
    // Seen now: made under the account's current recorder authorization.
    authorized: { type: 'boolean' },
    stepLimit: { type: 'number' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};

export function parseStep(input: { action?: unknown; target?: unknown; value?: unknown }): NewStep {
  if (input.action === undefined || input.action === null || input.action === '') {
    throw new InvalidParameterError('action', `Parameter 'action' is required: one of ${STEP_ACTIONS.join(', ')}`);
  }
  const optionalText = (name: string, value: unknown) =>
    value === undefined || value === null || value === ''
      ? null
      : checkText(name, asText(name, value), { maxLength: 4096 });
  return {
    action: checkEnum('action', asText('action', input.action), STEP_ACTIONS),
    target: optionalText('target', input.target),
    value: optionalText('value', input.value),
  };
}

/**
 * Whether one more step may be recorded: only while recording, and past the limit only under an
 * authorization that is still the account's current one. Past the limit an unauthorized
 * recording is cut (the caller stores that) and the step refused.
 */
export function nextStepVerdict(recording: Recording, authorized: boolean): 'RECORD' | 'CUT' {
  if (recording.state === 'CUT') {
    throw new ConflictError(
      `Recording ${recording.id} was cut at ${UNAUTHORIZED_STEP_LIMIT} steps: authorize the recorder (POST /api/me/recorder/authorizations) and start a new recording`,
    );
  }
  if (recording.state === 'FINISHED')
    throw new ConflictError(`Recording ${recording.id} is finished; start a new recording`);
  if (authorized || recording.stepCount < UNAUTHORIZED_STEP_LIMIT) return 'RECORD';
  return 'CUT';
}

export function cutError(recording: Recording): ForbiddenError {
  return new ForbiddenError(
    `Recording ${recording.id} is cut at ${UNAUTHORIZED_STEP_LIMIT} steps: without an authorized recorder a recording is limited to ${UNAUTHORIZED_STEP_LIMIT} steps. ` +
      'Authorize the recorder (POST /api/me/recorder/authorizations) to record without a limit',
  );
}
