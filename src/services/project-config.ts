/** The legacy project config (docs/api.md#project-config) and its key/value parameters. */
import { NotFoundError } from '../domain/errors.ts';
import { checkHookUrl, hookDestinationRules } from '../domain/hook-destinations.ts';
import {
  type ConfigParameter,
  type ProjectConfig,
  type RawConfigChange,
  applyConfigChange,
  checkConfigParameter,
  defaultConfig,
} from '../domain/project-config.ts';
import { PLAN_MAX_TIMEOUT_SECONDS, type User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { requireProject } from './projects.ts';

export interface ConfigView {
  readonly config: ProjectConfig;
  readonly usedDeviceGroupName: string | null;
  /** Whether a legacy run start (projectId only) has what it needs. */
  readonly runAvailable: boolean;
}

export async function getProjectConfig(ctx: Context, user: User, projectId: number): Promise<ConfigView> {
  const project = await requireProject(ctx, user, projectId);
  const config = (await ctx.store.projectConfigs.get(project.id)) ?? defaultConfig(project.id, project.type);
  return view(ctx, config);
}

export async function updateProjectConfig(
  ctx: Context,
  user: User,
  projectId: number,
  change: RawConfigChange,
): Promise<ConfigView> {
  const project = await requireProject(ctx, user, projectId);
  return ctx.store.transaction(async (store) => {
    const stored = await store.projectConfigs.get(project.id);
    const current = stored ?? defaultConfig(project.id, project.type);
    const next = applyConfigChange(current, change, {
      projectType: project.type,
      maxTimeout: PLAN_MAX_TIMEOUT_SECONDS[user.plan],
    });
    // Refused here already, rather than at every run started from this config.
    if (next.hookURL !== null && next.hookURL !== current.hookURL)
      checkHookUrl(next.hookURL, hookDestinationRules(ctx.limits.hookAllowNetworks));
    if (next.usedDeviceGroupId !== null && next.usedDeviceGroupId !== current.usedDeviceGroupId) {
      const group = await store.devices.findUsableGroup(user.id, next.usedDeviceGroupId);
      if (group === undefined) throw new NotFoundError('Device group', next.usedDeviceGroupId);
    }
    if (stored === undefined) await store.projectConfigs.insert(next);
    else await store.projectConfigs.save(next);
    return view({ ...ctx, store }, next);
  });
}

async function view(ctx: Context, config: ProjectConfig): Promise<ConfigView> {
  const names =
    config.usedDeviceGroupId === null
      ? new Map<number, string>()
      : await ctx.store.devices.groupNames([config.usedDeviceGroupId]);
  const usedDeviceGroupName = config.usedDeviceGroupId === null ? null : (names.get(config.usedDeviceGroupId) ?? null);
  return { config, usedDeviceGroupName, runAvailable: usedDeviceGroupName !== null };
}

export async function listConfigParameters(ctx: Context, user: User, projectId: number): Promise<ConfigParameter[]> {
  const project = await requireProject(ctx, user, projectId);
  return ctx.store.projectConfigs.parameters(project.id);
}

export async function addConfigParameter(
  ctx: Context,
  user: User,
  projectId: number,
  input: { key?: string; value?: string },
): Promise<ConfigParameter> {
  const { key, value } = checkConfigParameter(input);
  const project = await requireProject(ctx, user, projectId);
  return ctx.store.projectConfigs.addParameter(project.id, key, value);
}

export async function deleteConfigParameter(
  ctx: Context,
  user: User,
  projectId: number,
  parameterId: number,
): Promise<void> {
  const project = await requireProject(ctx, user, projectId);
  if (!(await ctx.store.projectConfigs.deleteParameter(project.id, parameterId))) {
    throw new NotFoundError('Config parameter', parameterId);
  }
}
