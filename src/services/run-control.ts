/** The user's abort and retry of whole runs and of single device sessions. */
import { InvalidParameterError } from '../domain/errors.ts';
import { type DeviceRun, isFinal, whyNotRetryable } from '../domain/runs.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { abortDeviceRuns, retryDeviceRuns } from './run-lifecycle.ts';
import { type DeviceRunScope, getRun, requireDeviceRun, requireRun } from './runs.ts';
import type { RunView } from './views.ts';

export async function abortRun(ctx: Context, user: User, runId: number, projectId?: number): Promise<RunView> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  await abortDeviceRuns(ctx, await ctx.store.deviceRuns.currentOfRun(run.id));
  return getRun(ctx, user, run.id);
}

/**
 * Retries the named device runs of a run or, with none named, the whole run: every current device
 * run that can be retried (docs/api.md#abort-retry-timeout), as the established service and its
 * clients' plain `retry()` do. Waiting and excluded ones are left as they are.
 */
export async function retryRun(
  ctx: Context,
  user: User,
  runId: number,
  projectId: number | undefined,
  deviceRunIds: readonly number[] | undefined,
): Promise<RunView> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  if (deviceRunIds === undefined || deviceRunIds.length === 0) {
    const current = await ctx.store.deviceRuns.currentOfRun(run.id);
    const chosen = current.filter((deviceRun) => whyNotRetryable(deviceRun) === null);
    if (chosen.length === 0)
      throw new InvalidParameterError(
        'deviceRunIds',
        `Run ${run.id} has nothing to retry: ${current.map((deviceRun) => `device run ${deviceRun.id} ${whyNotRetryable(deviceRun)}`).join('; ')}`,
      );
    await retryDeviceRuns(ctx, chosen);
  } else {
    const ids = [...new Set(deviceRunIds)];
    await retryDeviceRuns(ctx, await Promise.all(ids.map((id) => requireDeviceRun(ctx, user, id, { runId: run.id }))));
  }
  return getRun(ctx, user, run.id);
}

export async function abortDeviceSession(
  ctx: Context,
  user: User,
  id: number,
  scope?: DeviceRunScope,
): Promise<DeviceRun> {
  const deviceRun = await requireDeviceRun(ctx, user, id, scope);
  if (!isFinal(deviceRun.state)) await abortDeviceRuns(ctx, [deviceRun]);
  return requireDeviceRun(ctx, user, id, scope);
}

/** Answers the new device session that replaces the retried one. */
export async function retryDeviceSession(
  ctx: Context,
  user: User,
  id: number,
  scope?: DeviceRunScope,
): Promise<DeviceRun> {
  const deviceRun = await requireDeviceRun(ctx, user, id, scope);
  await retryDeviceRuns(ctx, [deviceRun]);
  const current = await ctx.store.deviceRuns.currentOfRun(deviceRun.testRunId);
  return current.find((candidate) => candidate.retriedFromId === deviceRun.id)!;
}
