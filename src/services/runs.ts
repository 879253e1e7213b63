/** Reading test runs and device runs (both views) of the user's projects. */
import { checkRunChanges } from '../domain/edits.ts';
import { NotFoundError } from '../domain/errors.ts';
import type { ListQuery } from '../domain/list-query.ts';
import { type DeviceRun, type Step } from '../domain/runs.ts';
import { runStats } from '../domain/run-stats.ts';
import { type DeviceRunListField, type USER_RUN_LIST } from '../domain/user-lists.ts';
import type { User } from '../domain/users.ts';
import type { RunRecord } from '../store/test-runs.ts';
import type { Context } from './context.ts';
import { NOT_QUEUED, queueStatuses, waitingIds } from './queue-status.ts';
import { type Access, requireProject } from './projects.ts';
import type { DeviceRunView, Page, RunView } from './views.ts';

type UserRunField = keyof (typeof USER_RUN_LIST)['fields'];

export async function listRuns(
  ctx: Context,
  user: User,
  projectId: number,
  query: ListQuery<UserRunField>,
): Promise<Page<RunView>> {
  await requireProject(ctx, user, projectId, 'read');
  const page = await ctx.store.testRuns.list(projectId, query);
  return { total: page.total, items: await withStats(ctx, page.items) };
}

/** All the user's runs, in every project of theirs (`/me/runs`). */
export async function listUserRuns(ctx: Context, user: User, query: ListQuery<UserRunField>): Promise<Page<RunView>> {
  const page = await ctx.store.testRuns.listOfUser(user.id, query);
  return { total: page.total, items: await withStats(ctx, page.items) };
}

/** All the user's current device sessions, in every run of theirs (`/me/device-sessions`). */
export async function listUserDeviceSessions(
  ctx: Context,
  user: User,
  query: ListQuery<DeviceRunListField>,
): Promise<Page<DeviceRunView>> {
  const page = await ctx.store.deviceRuns.listOfUser(user.id, query, ctx.clock());
  return { total: page.total, items: await withDevices(ctx, page.items) };
}

/** The user's run (or a shared project's, to read); with `projectId` it must also belong to that project (nested routes). */
export async function requireRun(
  ctx: Context,
  user: User,
  runId: number,
  projectId?: number,
  access: Access = 'change',
): Promise<RunRecord> {
  const record =
    access === 'read'
      ? await ctx.store.testRuns.findReadable(user.id, runId, projectId)
      : await ctx.store.testRuns.findOwned(user.id, runId, projectId);
  if (record === undefined) throw new NotFoundError('Test run', runId);
  return record;
}

export async function getRun(ctx: Context, user: User, runId: number, projectId?: number): Promise<RunView> {
  const [view] = await withStats(ctx, [await requireRun(ctx, user, runId, projectId, 'read')]);
  return view!;
}

/** Renames the run (docs/api.md#renaming-runs-and-files); answers it as it is now. */
export async function updateRun(
  ctx: Context,
  user: User,
  runId: number,
  projectId: number | undefined,
  input: { displayName?: string; name?: string },
): Promise<RunView> {
  // Another user's run is a 404 whatever the input (docs/api.md#formats).
  const { run } = await requireRun(ctx, user, runId, projectId);
  const changes = checkRunChanges(input);
  if (changes.name !== undefined) await ctx.store.testRuns.rename(run.id, changes.name);
  return getRun(ctx, user, run.id);
}

export async function deleteRun(ctx: Context, user: User, runId: number, projectId?: number): Promise<void> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  await ctx.store.testRuns.delete(run.id);
}

export async function listDeviceRuns(
  ctx: Context,
  user: User,
  runId: number,
  projectId: number | undefined,
  query: ListQuery<DeviceRunListField>,
): Promise<Page<DeviceRunView>> {
  const { run } = await requireRun(ctx, user, runId, projectId, 'read');
  const page = await ctx.store.deviceRuns.listOfRun(run.id, query, ctx.clock());
  return { total: page.total, items: await withDevices(ctx, page.items) };
}

export interface DeviceRunScope {
  readonly projectId?: number;
  readonly runId?: number;
}

/** The user's device run (or a shared project's, to read), checked against the project and run of a nested route. */
export async function requireDeviceRun(
  ctx: Context,
  user: User,
  id: number,
  scope: DeviceRunScope = {},
  access: Access = 'change',
): Promise<DeviceRun> {
  const deviceRun =
    access === 'read'
      ? await ctx.store.deviceRuns.findReadable(user.id, id)
      : await ctx.store.deviceRuns.findOwned(user.id, id);
  if (
    deviceRun === undefined ||
    (scope.projectId !== undefined && deviceRun.projectId !== scope.projectId) ||
    (scope.runId !== undefined && deviceRun.testRunId !== scope.runId)
  ) {
    throw new NotFoundError('Device run', id);
  }
  return deviceRun;
}

export async function getDeviceRun(
  ctx: Context,
  user: User,
  id: number,
  scope?: DeviceRunScope,
): Promise<DeviceRunView> {
  const [view] = await withDevices(ctx, [await requireDeviceRun(ctx, user, id, scope, 'read')]);
  return view!;
}

export async function deviceRunSteps(ctx: Context, user: User, id: number, scope?: DeviceRunScope): Promise<Step[]> {
  const deviceRun = await requireDeviceRun(ctx, user, id, scope, 'read');
  return ctx.store.deviceRuns.steps(deviceRun.id);
}

async function withStats(ctx: Context, records: readonly RunRecord[]): Promise<RunView[]> {
  const unfinished = records.filter((record) => record.run.finalTallies === null).map((record) => record.run.id);
  const tallies = await ctx.store.testRuns.tallies(unfinished);
  const queue = await queueStatuses(ctx.store, waitingIds(records));
  return records.map((record) => ({
    ...record,
    stats: runStats(record.run.finalTallies ?? tallies.get(record.run.id) ?? []),
    queue: queue.get(record.run.id) ?? NOT_QUEUED,
  }));
}

async function withDevices(ctx: Context, deviceRuns: readonly DeviceRun[]): Promise<DeviceRunView[]> {
  const devices = await ctx.store.devices.byIds(deviceRuns.map((deviceRun) => deviceRun.deviceId));
  const names = await ctx.store.testRuns.namesOf([...new Set(deviceRuns.map((deviceRun) => deviceRun.testRunId))]);
  const videos = await ctx.store.files.videosOf(deviceRuns.map((deviceRun) => deviceRun.id));
  return deviceRuns.map((deviceRun) => ({
    deviceRun,
    device: devices.get(deviceRun.deviceId)!,
    testRunName: names.get(deviceRun.testRunId)?.testRunName ?? '',
    projectName: names.get(deviceRun.testRunId)?.projectName ?? '',
    userEmail: names.get(deviceRun.testRunId)?.userEmail ?? '',
    videoFileId: videos.get(deviceRun.id) ?? null,
  }));
}
