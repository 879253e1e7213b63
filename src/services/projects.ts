/** Projects: create (with its default config), read, list with embedded runs, update, delete. */
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import type { ListQuery } from '../domain/list-query.ts';
import { defaultConfig } from '../domain/project-config.ts';
import {
  DEFAULT_ARCHIVING_ITEM_COUNT,
  DEFAULT_EMBEDDED_RUNS,
  MAX_EMBEDDED_RUNS,
  type Project,
  type PROJECT_LIST,
  checkNewProject,
  checkProjectChanges,
} from '../domain/projects.ts';
import { displayName } from '../domain/runs.ts';
import { runStats, talliesOf } from '../domain/run-stats.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { NOT_QUEUED, queueStatuses, waitingIds } from './queue-status.ts';
import type { DeviceRunView, Page, ProjectView, RunView } from './views.ts';

type ProjectField = keyof (typeof PROJECT_LIST)['fields'];

export async function createProject(
  ctx: Context,
  user: User,
  input: { name?: string; description?: string; type?: string },
): Promise<ProjectView> {
  const now = ctx.clock();
  const fields = checkNewProject(input, now);
  const project = await ctx.store.transaction(async (store) => {
    const created = await store.projects.insert(user.id, fields, now, DEFAULT_ARCHIVING_ITEM_COUNT);
    await store.projectConfigs.insert(defaultConfig(created.id, created.type));
    return created;
  });
  return { project, figures: { testRunCount: 0, successRatio: 0 } };
}

/**
 * What the caller means to do with a project and what hangs off it (runs, device sessions, their
 * results): read it (its owner, and whom it is shared with) or change it (its owner alone). The
 * one place sharing widens access (docs/api.md#sharing); change is the default.
 */
export type Access = 'read' | 'change';

/** The user's project (or one shared with them, to read), or 404 for a missing and a foreign id alike. */
export async function requireProject(
  ctx: Context,
  user: User,
  projectId: number,
  access: Access = 'change',
): Promise<Project> {
  const project =
    access === 'read'
      ? await ctx.store.projects.findReadable(user.id, projectId)
      : await ctx.store.projects.findOwned(user.id, projectId);
  if (project === undefined) throw new NotFoundError('Project', projectId);
  return project;
}

export async function getProject(ctx: Context, user: User, projectId: number): Promise<ProjectView> {
  const project = await requireProject(ctx, user, projectId, 'read');
  const figures = await ctx.store.projects.figures([project.id]);
  return { project, figures: figures.get(project.id)! };
}

export async function updateProject(
  ctx: Context,
  user: User,
  projectId: number,
  input: { name?: string; description?: string; archivingStrategy?: string; archivingItemCount?: string },
): Promise<ProjectView> {
  const changes = checkProjectChanges(input);
  await requireProject(ctx, user, projectId);
  await ctx.store.projects.update(projectId, changes);
  return getProject(ctx, user, projectId);
}

/**
 * Takes the project out of the archive (docs/api.md#retention): `archiveTime` becomes null, and
 * an unused project's 90 days start again, so it is neither removed nor emptied again meanwhile.
 * The files the archive removed do not come back.
 */
export async function unarchiveProject(ctx: Context, user: User, projectId: number): Promise<ProjectView> {
  await requireProject(ctx, user, projectId);
  await ctx.store.projects.unarchive(projectId, ctx.clock());
  return getProject(ctx, user, projectId);
}

/** Removes the project with its config, runs and results (the schema cascades). */
export async function deleteProject(ctx: Context, user: User, projectId: number): Promise<void> {
  await requireProject(ctx, user, projectId);
  await ctx.store.projects.delete(projectId);
}

export function parseEmbedRuns(raw: unknown): number {
  if (raw === undefined || raw === '') return DEFAULT_EMBEDDED_RUNS;
  const text = String(raw);
  if (!/^\d+$/.test(text) || Number(text) > MAX_EMBEDDED_RUNS) {
    throw new InvalidParameterError(
      'embedRuns',
      `Parameter 'embedRuns' must be an integer between 0 and ${MAX_EMBEDDED_RUNS}`,
    );
  }
  return Number(text);
}

/**
 * The project listing (docs/api.md#projects): each project with its newest test runs and their device runs.
 * A fixed number of statements whatever the page size: count, page, figures (2), runs, device
 * runs, devices, and (when some runs wait) their queue standings with those devices and runs.
 */
export async function listProjects(
  ctx: Context,
  user: User,
  query: ListQuery<ProjectField>,
  embedRuns: number,
): Promise<Page<ProjectView>> {
  const { store } = ctx;
  const page = await store.projects.list(user.id, query);
  const projectIds = page.items.map((project) => project.id);
  const figures = await store.projects.figures(projectIds);
  const runs = await store.testRuns.recentOf(projectIds, embedRuns);
  const deviceRuns = await store.deviceRuns.ofRuns(runs.map((record) => record.run.id));
  const devices = await store.devices.byIds(deviceRuns.map((deviceRun) => deviceRun.deviceId));
  const videos = await store.files.videosOf(deviceRuns.map((deviceRun) => deviceRun.id));
  const queue = await queueStatuses(store, waitingIds(runs));

  const deviceRunsByRun = new Map<number, DeviceRunView[]>();
  const records = new Map(runs.map((record) => [record.run.id, record]));
  for (const deviceRun of deviceRuns) {
    const list = deviceRunsByRun.get(deviceRun.testRunId) ?? [];
    const record = records.get(deviceRun.testRunId)!;
    list.push({
      deviceRun,
      device: devices.get(deviceRun.deviceId)!,
      testRunName: displayName(record.run),
      projectName: record.projectName,
      // The run's user started it (services/start-run.ts): the session is theirs.
      userEmail: record.startedByEmail,
      videoFileId: videos.get(deviceRun.id) ?? null,
    });
    deviceRunsByRun.set(deviceRun.testRunId, list);
  }
  const runsByProject = new Map<number, RunView[]>();
  for (const record of runs) {
    const children = deviceRunsByRun.get(record.run.id) ?? [];
    const list = runsByProject.get(record.run.projectId) ?? [];
    list.push({
      ...record,
      stats: runStats(talliesOf(children.map((child) => child.deviceRun))),
      queue: queue.get(record.run.id) ?? NOT_QUEUED,
      deviceRuns: children,
    });
    runsByProject.set(record.run.projectId, list);
  }
  return {
    total: page.total,
    items: page.items.map((project) => ({
      project,
      figures: figures.get(project.id)!,
      testRuns: runsByProject.get(project.id) ?? [],
    })),
  };
}
