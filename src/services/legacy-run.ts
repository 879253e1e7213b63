/**
 * The "mode" era (docs/api.md#project-config): a run started with only a project id uses the
 * project's stored config (mode → framework, usedDeviceGroupId → devices) and the project's newest uploaded files. This
 * turns that into the same RunRequest a modern TestRunConfig gives, so one use case starts both.
 */
import { InvalidParameterError } from '../domain/errors.ts';
import { type FileAction, PROJECT_FILE_SLOTS, defaultAction } from '../domain/files.ts';
import { frameworkOfMode } from '../domain/frameworks.ts';
import { osFamilyOfMode, type ProjectConfig } from '../domain/project-config.ts';
import { osFamilyOfType } from '../domain/projects.ts';
import type { RunFileRef, RunRequest } from '../domain/run-config.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { getProjectConfig } from './project-config.ts';

export interface LegacyOverrides {
  /** Explicit devices (`usedDeviceIds[]` of the project runs route) instead of the config's group. */
  readonly deviceIds?: readonly number[] | null;
  readonly files?: readonly RunFileRef[] | null;
  readonly testRunName?: string | null;
}

export async function legacyRunRequest(
  ctx: Context,
  user: User,
  projectId: number,
  request: RunRequest,
  overrides: LegacyOverrides = {},
): Promise<RunRequest> {
  const { config } = await getProjectConfig(ctx, user, projectId);
  const deviceIds = overrides.deviceIds ?? request.deviceIds;
  if (config.usedDeviceGroupId === null && (deviceIds === null || deviceIds.length === 0)) {
    throw new InvalidParameterError(
      'usedDeviceGroupId',
      `The project config has no usedDeviceGroupId: set one with POST /api/v2/projects/${projectId}/config (usedDeviceGroupId=<device group id>) before starting a run`,
    );
  }
  const project = (await ctx.store.projects.findOwned(user.id, projectId))!;
  const group =
    config.usedDeviceGroupId === null
      ? undefined
      : await ctx.store.devices.findUsableGroup(user.id, config.usedDeviceGroupId);
  const osType = osFamilyOfMode(config.mode) ?? osFamilyOfType(project.type) ?? group?.osType ?? 'ANDROID';
  const parameters = await ctx.store.projectConfigs.parameters(projectId);
  return {
    ...request,
    osType,
    frameworkId: frameworkOfMode(config.mode, osType).id,
    projectId,
    deviceGroupId: deviceIds !== null && deviceIds.length > 0 ? null : config.usedDeviceGroupId,
    deviceIds: deviceIds !== null && deviceIds.length > 0 ? deviceIds : null,
    files: overrides.files ?? request.files ?? (await latestProjectFiles(ctx, projectId)),
    testRunName: overrides.testRunName ?? request.testRunName,
    timeout: request.timeout ?? config.timeout,
    testRunParameters: [...parameters.map(({ key, value }) => ({ key, value })), ...request.testRunParameters],
    hookURL: request.hookURL ?? config.hookURL,
    maxAutoRetriesCount: request.maxAutoRetriesCount ?? config.maxAutoRetriesCount,
    scheduler: request.scheduler ?? config.scheduler,
    deviceLanguageCode: request.deviceLanguageCode ?? config.deviceLanguageCode,
    ...fromConfig(config, request),
  };
}

function fromConfig(config: ProjectConfig, request: RunRequest): Partial<RunRequest> {
  return {
    limitationType: request.limitationType ?? config.limitationType,
    limitationValue: request.limitationValue ?? config.limitationValue,
    instrumentationRunner: request.instrumentationRunner ?? config.instrumentationRunner,
    withAnnotation: request.withAnnotation ?? config.withAnnotation,
    withoutAnnotation: request.withoutAnnotation ?? config.withoutAnnotation,
    applicationUsername: request.applicationUsername ?? config.applicationUsername,
    applicationPassword: request.applicationPassword ?? config.applicationPassword,
    launchApp: request.launchApp ?? config.launchApp,
    videoRecordingEnabled: request.videoRecordingEnabled ?? config.videoRecordingEnabled,
  };
}

/** The newest application, test and data files uploaded to the project (legacy slots). */
async function latestProjectFiles(ctx: Context, projectId: number): Promise<RunFileRef[]> {
  const refs: RunFileRef[] = [];
  for (const slot of PROJECT_FILE_SLOTS) {
    const file = await ctx.store.files.latestOfProject(projectId, slot);
    if (file !== undefined) refs.push({ id: file.id, action: actionOfSlot(slot, file.inputType) });
  }
  return refs;
}

function actionOfSlot(slot: string, inputType: Parameters<typeof defaultAction>[0]): FileAction {
  if (slot === 'application') return 'INSTALL';
  if (slot === 'test') return 'RUN_TEST';
  return defaultAction(inputType === 'DATA' ? 'DATA' : null);
}
