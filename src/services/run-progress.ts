/**
 * How far a run and its device sessions have come, and what they have produced so far
 * (docs/api.md#steps-and-data-availability): read from the sessions' recorded steps, output files
 * and samples, never assumed. A run's figures are its current sessions' (a session a retry
 * replaced is no longer the run's).
 */
import { NotFoundError } from '../domain/errors.ts';
import {
  type DataAvailability,
  type RunStep,
  currentStep,
  dataAvailability,
  runSteps,
} from '../domain/run-progress.ts';
import type { Step } from '../domain/runs.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { type DeviceRunScope, requireDeviceRun, requireRun } from './runs.ts';

export interface RunStepsView {
  readonly runId: number;
  readonly steps: readonly RunStep[];
}

export async function runStepsOf(
  ctx: Context,
  user: User,
  runId: number,
  projectId: number | undefined,
): Promise<RunStepsView> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  const sessions = await ctx.store.deviceRuns.currentOfRun(run.id);
  const steps = await ctx.store.deviceRuns.stepsOfMany(sessions.map((session) => session.id));
  return { runId: run.id, steps: runSteps(sessions, steps) };
}

export interface RunDataAvailability {
  readonly runId: number;
  readonly projectId: number;
  /** One per current device session, by id. */
  readonly sessions: readonly DataAvailability[];
}

export async function runDataAvailability(
  ctx: Context,
  user: User,
  runId: number,
  projectId: number | undefined,
): Promise<RunDataAvailability> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  const sessions = await ctx.store.deviceRuns.currentOfRun(run.id);
  const ids = sessions.map((session) => session.id);
  const tags = await ctx.store.files.outputTagsOf(ids);
  const sampled = await ctx.store.results.sampled(ids);
  return {
    runId: run.id,
    projectId: run.projectId,
    sessions: ids.map((id) => dataAvailability(id, tags.get(id), sampled.has(id))),
  };
}

/** The step the session is in, or the last it was in; a session that never had one is a 404 saying so. */
export async function currentStepOf(ctx: Context, user: User, id: number, scope?: DeviceRunScope): Promise<Step> {
  const deviceRun = await requireDeviceRun(ctx, user, id, scope);
  const step = currentStep(await ctx.store.deviceRuns.steps(deviceRun.id));
  if (step === null) {
    throw new NotFoundError(
      deviceRun.state === 'EXCLUDED'
        ? `The current step of device session ${deviceRun.id}, which was excluded (${deviceRun.excludeReason}) and never ran,`
        : `The current step of device session ${deviceRun.id}, which has recorded no step,`,
    );
  }
  return step;
}

/**
 * The connections open to a device session. Sessions here are automatic runs: nothing connects to
 * one from outside (the run's ADB endpoint serves the run's own script on its device host, and is
 * not reachable from elsewhere: docs/api.md#steps-and-data-availability), so a session of yours
 * has none; another user's is a 404.
 */
export async function connectionsOf(ctx: Context, user: User, id: number, scope?: DeviceRunScope): Promise<never[]> {
  await requireDeviceRun(ctx, user, id, scope);
  return [];
}
