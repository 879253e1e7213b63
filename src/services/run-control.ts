/** The user's abort and retry of whole runs and of single device sessions. */
import { InvalidParameterError } from '../domain/errors.ts';
import { type DeviceRun, isFinal } from '../domain/runs.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { abortDeviceRuns, retryDeviceRuns } from './run-lifecycle.ts';
import { type DeviceRunScope, getRun, requireDeviceRun, requireRun } from './runs.ts';
import type { RunView } from './views.ts';

const RETRIED_BY_DEFAULT = new Set(['FAILED', 'WARNING', 'TIMEOUT', 'ABORTED']);

export async function abortRun(ctx: Context, user: User, runId: number, projectId?: number): Promise<RunView> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  await abortDeviceRuns(ctx, await ctx.store.deviceRuns.currentOfRun(run.id));
  return getRun(ctx, user, run.id);
}

/** Retries the chosen device runs of a run, by default those that did not succeed. */
export async function retryRun(
  ctx: Context,
  user: User,
  runId: number,
  projectId: number | undefined,
  deviceRunIds: readonly number[] | undefined,
): Promise<RunView> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  const current = await ctx.store.deviceRuns.currentOfRun(run.id);
  let chosen: DeviceRun[];
  if (deviceRunIds === undefined || deviceRunIds.length === 0) {
    chosen = current.filter((deviceRun) => RETRIED_BY_DEFAULT.has(deviceRun.state));
    if (chosen.length === 0)
      throw new InvalidParameterError(
        'deviceRunIds',
        'No device run of this run failed; name the ones to retry in deviceRunIds[]',
      );
  } else {
    chosen = await Promise.all(deviceRunIds.map((id) => requireDeviceRun(ctx, user, id, { runId: run.id })));
  }
  await retryDeviceRuns(ctx, chosen);
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
