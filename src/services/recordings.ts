/** The recorder tool's use cases (domain/recordings.ts has the rules). */
import { randomBytes } from 'node:crypto';
import { ForbiddenError, NotFoundError } from '../domain/errors.ts';
import type { ListQuery } from '../domain/list-query.ts';
import {
  type RECORDING_LIST,
  type RecorderAuthorization,
  type Recording,
  type RecordingStep,
  cutError,
  nextStepVerdict,
  parseStep,
} from '../domain/recordings.ts';
import { checkEnum, checkText } from '../domain/text.ts';
import type { User } from '../domain/users.ts';
import { asText } from '../domain/values.ts';
import type { Page } from './views.ts';
import type { Context } from './context.ts';
import { apiKeyHash } from './credentials.ts';

export interface RecordingView {
  readonly recording: Recording;
  /** Recorded under the account's current authorization: no step limit. */
  readonly authorized: boolean;
}

/** Authorizes a recorder client; the account's previous authorization ends. The token is shown once. */
export async function authorizeRecorder(
  ctx: Context,
  user: User,
): Promise<{ authorization: RecorderAuthorization; token: string; ended: number }> {
  const token = `rec_${randomBytes(24).toString('base64url')}`;
  const now = ctx.clock();
  return ctx.store.transaction(async (store) => {
    const ended = await store.recordings.endAuthorizations(user.id, now);
    const authorization = await store.recordings.insertAuthorization(user.id, apiKeyHash(token), now);
    return { authorization, token, ended };
  });
}

export async function currentRecorderAuthorization(ctx: Context, user: User): Promise<RecorderAuthorization> {
  const current = await ctx.store.recordings.currentAuthorization(user.id);
  if (current === undefined) throw new NotFoundError('Recorder authorization');
  return current;
}

export async function endRecorderAuthorization(ctx: Context, user: User): Promise<void> {
  if ((await ctx.store.recordings.endAuthorizations(user.id, ctx.clock())) === 0)
    throw new NotFoundError('Recorder authorization');
}

export async function startRecording(
  ctx: Context,
  user: User,
  input: { name?: unknown; osType?: unknown; authorizationToken?: unknown },
): Promise<RecordingView> {
  const name =
    input.name === undefined || input.name === ''
      ? 'Recording'
      : checkText('name', asText('name', input.name), { maxLength: 255, required: true });
  const osType =
    input.osType === undefined || input.osType === ''
      ? null
      : checkEnum('osType', asText('osType', input.osType), ['ANDROID', 'IOS'] as const);
  let authorizationId: number | null = null;
  if (input.authorizationToken !== undefined && input.authorizationToken !== '') {
    const found = await ctx.store.recordings.authorizationByTokenHash(
      apiKeyHash(asText('authorizationToken', input.authorizationToken)),
    );
    if (found === undefined || found.userId !== user.id || found.endTime !== null) {
      throw new ForbiddenError(
        "Parameter 'authorizationToken' is not this account's current recorder authorization (a newer one ends older ones)",
      );
    }
    authorizationId = found.id;
  }
  const recording = await ctx.store.recordings.insertRecording({
    userId: user.id,
    name,
    osType,
    authorizationId,
    createTime: ctx.clock(),
  });
  return { recording, authorized: authorizationId !== null };
}

export async function getRecording(ctx: Context, user: User, id: number): Promise<RecordingView> {
  const recording = await requireRecording(ctx, user, id);
  return { recording, authorized: await isAuthorized(ctx, user, recording) };
}

export async function listRecordings(
  ctx: Context,
  user: User,
  query: ListQuery<keyof (typeof RECORDING_LIST)['fields']>,
): Promise<Page<RecordingView>> {
  const page = await ctx.store.recordings.list(user.id, query);
  const current = await ctx.store.recordings.currentAuthorization(user.id);
  return {
    total: page.total,
    items: page.items.map((recording) => ({
      recording,
      authorized: recording.authorizationId !== null && recording.authorizationId === current?.id,
    })),
  };
}

export async function recordingSteps(ctx: Context, user: User, id: number): Promise<RecordingStep[]> {
  await requireRecording(ctx, user, id);
  return ctx.store.recordings.steps(id);
}

/** One more step; past the limit an unauthorized recording is cut, which stays recorded though the step is refused. */
export async function recordStep(
  ctx: Context,
  user: User,
  id: number,
  input: { action?: unknown; target?: unknown; value?: unknown },
): Promise<RecordingStep> {
  const now = ctx.clock();
  const outcome = await ctx.store.transaction(async (store) => {
    const recording = await store.recordings.findOwnedForUpdate(user.id, id);
    // Another account's id is a 404 whatever the step says.
    if (recording === undefined) throw new NotFoundError('Recording', id);
    const step = parseStep(input);
    const current = await store.recordings.currentAuthorization(user.id);
    const authorized = recording.authorizationId !== null && recording.authorizationId === current?.id;
    if (nextStepVerdict(recording, authorized) === 'CUT') {
      await store.recordings.end(recording.id, 'CUT', now);
      return { kind: 'cut', recording } as const;
    }
    return { kind: 'recorded', step: await store.recordings.appendStep(recording, step, now) } as const;
  });
  if (outcome.kind === 'cut') throw cutError(outcome.recording);
  return outcome.step;
}

export async function finishRecording(ctx: Context, user: User, id: number): Promise<RecordingView> {
  const recording = await requireRecording(ctx, user, id);
  await ctx.store.recordings.end(recording.id, 'FINISHED', ctx.clock());
  return getRecording(ctx, user, id);
}

async function requireRecording(ctx: Context, user: User, id: number): Promise<Recording> {
  const recording = await ctx.store.recordings.findOwned(user.id, id);
  if (recording === undefined) throw new NotFoundError('Recording', id);
  return recording;
}

async function isAuthorized(ctx: Context, user: User, recording: Recording): Promise<boolean> {
  if (recording.authorizationId === null) return false;
  return (await ctx.store.recordings.currentAuthorization(user.id))?.id === recording.authorizationId;
}
