/**
 * Starting a test run (`POST /runs`, the legacy project forms, and validate-only). Everything is
 * checked before anything is written: planRun only reads and either throws a 4xx naming the
 * problem or returns a complete plan; startRun then writes the plan in one transaction.
 */
import { checkClientMayRun } from '../domain/clients.ts';
import type { Device, DeviceGroup } from '../domain/devices.ts';
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import { type FileAction, type UserFile, defaultAction } from '../domain/files.ts';
import { type Framework, frameworkById } from '../domain/frameworks.ts';
import { type DeviceSettings, checkSettingsSupported, deviceSettingsOf } from '../domain/flavours.ts';
import { checkHookUrl, hookDestinationRules } from '../domain/hook-destinations.ts';
import type { Scheduler } from '../domain/project-config.ts';
import type { Project, ProjectType } from '../domain/projects.ts';
import { RUN_CONFIG_DEFAULTS, type RunParameter, type RunRequest } from '../domain/run-config.ts';
import {
  RUN_SETTINGS_VERSION,
  type RunSecrets,
  type RunSettings,
  deviceSettingsFields,
  runSecrets,
} from '../domain/run-settings.ts';
import type { ExcludeReason } from '../domain/runs.ts';
import { PLAN_MAX_TIMEOUT_SECONDS, PLAN_PRIORITY, type User } from '../domain/users.ts';
import type { Store } from '../store/store.ts';
import type { NewDeviceRun } from '../store/device-runs.ts';
import type { Context } from './context.ts';
import { createProject, requireProject } from './projects.ts';
import { type Wakeups, refreshRunState, wake } from './run-lifecycle.ts';
import { getRun } from './runs.ts';
import { keepRunSecrets } from './run-secrets.ts';
import type { RunView } from './views.ts';

export interface PlannedDevice {
  readonly device: Device;
  readonly excludeReason: ExcludeReason | null;
}

export interface RunPlan {
  /** The project, or the name of one to create. */
  readonly project: Project | { readonly newName: string; readonly type: ProjectType };
  readonly osType: 'ANDROID' | 'IOS';
  readonly framework: Framework;
  readonly group: DeviceGroup | null;
  readonly devices: readonly PlannedDevice[];
  readonly files: ReadonlyArray<{ readonly file: UserFile; readonly action: FileAction }>;
  readonly timeout: number;
  readonly maxTimeout: number;
  readonly scheduler: Scheduler;
  readonly maxAutoRetriesCount: number;
  readonly parameters: readonly RunParameter[];
  readonly deviceSettings: DeviceSettings | null;
  /** Whether its device sessions record a video: the request says, else the project's setting, else on. */
  readonly video: boolean;
  readonly request: RunRequest;
}

export async function planRun(ctx: Context, user: User, request: RunRequest): Promise<RunPlan> {
  const { store } = ctx;
  const deviceSettings = deviceSettingsOf(ctx.flavour, request);
  if (request.hookURL !== null) checkHookUrl(request.hookURL, hookDestinationRules(ctx.limits.hookAllowNetworks));
  const project = await resolveProject(ctx, user, request);
  if (request.frameworkId === null) {
    throw new InvalidParameterError(
      'frameworkId',
      `Parameter 'frameworkId' is required; /api/me/available-frameworks lists them`,
    );
  }
  const framework = frameworkById(request.frameworkId);
  if (framework === undefined) throw new NotFoundError('Framework', request.frameworkId);
  if (framework.unavailableReason !== null)
    throw new InvalidParameterError('frameworkId', `${framework.name} cannot be used: ${framework.unavailableReason}`);
  checkClientMayRun(request.client, framework);
  const osType = request.osType ?? framework.osType;
  if (framework.osType !== osType) {
    throw new InvalidParameterError(
      'frameworkId',
      `${framework.name} runs on ${framework.osType} devices, but osType is ${osType}`,
    );
  }
  if (deviceSettings !== null) checkSettingsSupported(osType, deviceSettings);

  const files = await resolveFiles(ctx, user, request, framework, osType);
  const { group, devices } = await resolveDevices(store, user, request, osType);
  const app = files.find((entry) => entry.action === 'INSTALL')?.file;
  const maxTimeout = PLAN_MAX_TIMEOUT_SECONDS[user.plan];
  // The user's preferred timeout when the request names none (docs/api.md#preferences).
  const timeout = request.timeout ?? (await store.preferences.testTimeoutOf(user.id)) ?? RUN_CONFIG_DEFAULTS.timeout;
  if (timeout > maxTimeout) {
    throw new InvalidParameterError(
      'timeout',
      `Parameter 'timeout' is ${timeout} seconds; your ${user.plan} plan allows at most ${maxTimeout}`,
    );
  }
  return {
    project,
    osType,
    framework,
    group,
    devices: devices.map((device) => ({ device, excludeReason: exclusion(device, framework, app) })),
    files,
    timeout,
    maxTimeout,
    scheduler: request.scheduler ?? RUN_CONFIG_DEFAULTS.scheduler,
    maxAutoRetriesCount: request.maxAutoRetriesCount ?? RUN_CONFIG_DEFAULTS.maxAutoRetriesCount,
    parameters: request.testRunParameters,
    deviceSettings,
    video:
      request.videoRecordingEnabled ??
      ('id' in project ? (await store.projectConfigs.get(project.id))?.videoRecordingEnabled : undefined) ??
      RUN_CONFIG_DEFAULTS.videoRecordingEnabled,
    request,
  };
}

async function resolveProject(ctx: Context, user: User, request: RunRequest): Promise<RunPlan['project']> {
  if (request.projectId !== null) return requireProject(ctx, user, request.projectId);
  if (request.projectName !== null) {
    const existing = await ctx.store.projects.findByName(user.id, request.projectName);
    if (existing !== undefined) return existing;
    const framework = request.frameworkId === null ? undefined : frameworkById(request.frameworkId);
    return { newName: request.projectName, type: (framework?.forProjects[0] as ProjectType | undefined) ?? 'GENERIC' };
  }
  throw new InvalidParameterError('projectId', `Parameter 'projectId' or 'projectName' is required`);
}

async function resolveFiles(
  ctx: Context,
  user: User,
  request: RunRequest,
  framework: Framework,
  osType: 'ANDROID' | 'IOS',
): Promise<RunPlan['files']> {
  const refs = request.files ?? [];
  const owned = await ctx.store.files.ownedByIds(
    user.id,
    refs.map((ref) => ref.id),
  );
  const files = refs.map((ref) => {
    const file = owned.get(ref.id);
    if (file === undefined || file.direction !== 'INPUT') throw new NotFoundError('File', ref.id);
    if (file.state !== 'READY')
      throw new InvalidParameterError(
        'files',
        `File ${file.id} (${file.name}) is still being processed; try again shortly`,
      );
    return { file, action: ref.action ?? defaultAction(file.inputType) };
  });
  const apps = files.filter((entry) => entry.action === 'INSTALL');
  const tests = files.filter((entry) => entry.action === 'RUN_TEST');
  if (apps.length > 1) throw new InvalidParameterError('files', 'Give at most one file with action INSTALL (the app)');
  if (tests.length > 1)
    throw new InvalidParameterError('files', 'Give at most one file with action RUN_TEST (the tests)');
  const [app] = apps;
  const [test] = tests;
  if (framework.requiredAppExtensions.length > 0) {
    if (app === undefined) {
      throw new InvalidParameterError(
        'files',
        `${framework.name} needs the app: a file (.${framework.requiredAppExtensions.join(' or .')}) with action INSTALL`,
      );
    }
    if (app.file.inputType !== 'APPLICATION') {
      throw new InvalidParameterError(
        'files',
        `File ${app.file.id} (${app.file.name}) is a ${app.file.inputType} file, not an app; install an ${osType === 'IOS' ? 'IPA' : 'APK'}`,
      );
    }
    if (app.file.osType !== osType) {
      throw new InvalidParameterError(
        'files',
        `File ${app.file.id} (${app.file.name}) is an ${app.file.osType} app; this run is for ${osType} devices`,
      );
    }
  }
  if (framework.requiredTestExtensions.length > 0) {
    const accepted = framework.requiredTestExtensions.map((extension) => `.${extension}`).join(' or ');
    if (test === undefined) {
      throw new InvalidParameterError(
        'files',
        `${framework.name} needs the tests: a file (${accepted}) with action RUN_TEST${framework.requiresSourceCode ? ' holding your source code' : ''}`,
      );
    }
    const extension = test.file.name.toLowerCase().split('.').pop() ?? '';
    if (test.file.inputType !== 'TEST' || !framework.requiredTestExtensions.includes(extension)) {
      throw new InvalidParameterError(
        'files',
        `File ${test.file.id} (${test.file.name}) is not a test file ${framework.name} can run; it needs ${accepted} (a zip with run-tests.sh for server-side tests)`,
      );
    }
  }
  return files;
}

async function resolveDevices(
  store: Store,
  user: User,
  request: RunRequest,
  osType: 'ANDROID' | 'IOS',
): Promise<{ group: DeviceGroup | null; devices: Device[] }> {
  if (request.deviceIds !== null) {
    const found = await store.devices.byIds(request.deviceIds);
    const devices = request.deviceIds.map((id) => {
      const device = found.get(id);
      if (device === undefined) throw new NotFoundError('Device', id);
      if (device.osType !== osType)
        throw new InvalidParameterError(
          'deviceIds',
          `Device ${id} (${device.displayName}) is an ${device.osType} device; this run is for ${osType}`,
        );
      return device;
    });
    return { group: null, devices };
  }
  let group: DeviceGroup | undefined;
  if (request.deviceGroupId !== null) {
    group = await store.devices.findUsableGroup(user.id, request.deviceGroupId);
    if (group === undefined) throw new NotFoundError('Device group', request.deviceGroupId);
    if (group.osType !== osType) {
      throw new InvalidParameterError(
        'deviceGroupId',
        `Device group '${group.displayName}' holds ${group.osType} devices; this run is for ${osType}`,
      );
    }
  } else {
    group = await store.devices.defaultGroup(user.id, osType);
    if (group === undefined)
      throw new InvalidParameterError(
        'deviceGroupId',
        `Parameter 'deviceGroupId' or 'deviceIds' is required: there is no ${osType} device group to default to`,
      );
  }
  const devices = await store.devices.devicesOfGroup(group.id);
  if (devices.length === 0)
    throw new InvalidParameterError(
      'deviceGroupId',
      `Device group '${group.displayName}' has no devices; add devices to it first`,
    );
  return { group, devices };
}

/** Why a device cannot take part, or null when it can (docs/api.md#starting-runs: kept as EXCLUDED device runs). */
function exclusion(device: Device, framework: Framework, app: UserFile | undefined): ExcludeReason | null {
  if (!device.enabled) return 'ADMIN';
  if (!device.executionKinds.includes(framework.kind)) return 'FRAMEWORK_NOT_SUPPORTED';
  const minSdk = Number(app?.properties.min_sdk);
  if (device.osType === 'ANDROID' && Number.isFinite(minSdk) && device.apiLevel !== null && device.apiLevel < minSdk)
    return 'API_LEVEL';
  return null;
}

/** The run's settings as stored with it and shown back (`config` of a TestRun): everything but its secrets. */
export function storedConfig(plan: RunPlan, projectId: number): RunSettings {
  const { request } = plan;
  return {
    v: RUN_SETTINGS_VERSION,
    osType: plan.osType,
    frameworkId: plan.framework.id,
    projectId,
    deviceGroupId: plan.group?.id ?? null,
    deviceIds: plan.devices.map((entry) => entry.device.id),
    files: plan.files.map((entry) => ({ id: entry.file.id, action: entry.action })),
    testRunName: request.testRunName,
    timeout: plan.timeout,
    testRunParameters: plan.parameters.map((parameter) => ({ key: parameter.key, value: parameter.value })),
    scheduler: plan.scheduler,
    hookURL: request.hookURL,
    maxAutoRetriesCount: plan.maxAutoRetriesCount,
    deviceLanguageCode: request.deviceLanguageCode ?? RUN_CONFIG_DEFAULTS.deviceLanguageCode,
    limitationType: request.limitationType,
    limitationValue: request.limitationValue,
    instrumentationRunner: request.instrumentationRunner,
    withAnnotation: request.withAnnotation,
    withoutAnnotation: request.withoutAnnotation,
    applicationUsername: request.applicationUsername,
    launchApp: request.launchApp ?? RUN_CONFIG_DEFAULTS.launchApp,
    ...deviceSettingsFields(plan.deviceSettings),
    ...(plan.video ? {} : { videoRecordingEnabled: false }),
  };
}

/** The passwords the run hands the device: for the agent only, sealed apart from the settings. */
function secretsOf(plan: RunPlan): RunSecrets | null {
  return runSecrets(plan.request.applicationPassword, plan.deviceSettings?.googleAccount?.password ?? null);
}

export async function startRun(ctx: Context, user: User, request: RunRequest): Promise<RunView> {
  const plan = await planRun(ctx, user, request);
  const now = ctx.clock();
  const { runId, agentIds } = await ctx.store.transaction(async (store) => {
    const project =
      'id' in plan.project
        ? plan.project
        : (await createProject({ ...ctx, store }, user, { name: plan.project.newName, type: plan.project.type }))
            .project;
    if (project.osType === 'UNDEFINED') await store.projects.setOsType(project.id, plan.osType);
    const run = await store.testRuns.insert({
      projectId: project.id,
      userId: user.id,
      name: request.testRunName,
      osType: plan.osType,
      config: storedConfig(plan, project.id),
      frameworkId: plan.framework.id,
      startedById: user.id,
      createTime: now,
      scheduler: plan.scheduler,
      hookUrl: request.hookURL,
    });
    const secrets = secretsOf(plan);
    if (secrets !== null) await keepRunSecrets(store, ctx.keyRing, run.id, secrets);
    for (const planned of plan.devices) {
      await store.deviceRuns.insert(plannedDeviceRun(plan, { id: run.id, projectId: project.id }, user, planned, now));
    }
    // A run whose every device was excluded is finished at once (and its hook called).
    await refreshRunState(store, run.id, now);
    await store.users.touchLaunchedTest(user.id, now);
    const agents: Wakeups = new Set(
      plan.devices
        .filter((entry) => entry.excludeReason === null && entry.device.agentId !== null)
        .map((entry) => entry.device.agentId!),
    );
    return { runId: run.id, agentIds: agents };
  });
  wake(ctx, agentIds);
  return getRun(ctx, user, runId);
}

/** A device run of the plan's, WAITING or EXCLUDED, as a run's start (or a session joining its run) inserts it. */
export function plannedDeviceRun(
  plan: RunPlan,
  run: { readonly id: number; readonly projectId: number },
  user: User,
  { device, excludeReason }: PlannedDevice,
  now: number,
): NewDeviceRun {
  return {
    testRunId: run.id,
    projectId: run.projectId,
    userId: user.id,
    deviceId: device.id,
    state: excludeReason === null ? 'WAITING' : 'EXCLUDED',
    excludeReason,
    createTime: now,
    timeLimit: plan.timeout,
    retryState: 'NONE',
    autoRetriesLeftCount: plan.maxAutoRetriesCount,
    priority: PLAN_PRIORITY[user.plan],
    frameworkKind: plan.framework.kind,
    serialGroup: plan.scheduler === 'SERIAL' ? run.id : null,
    singleGroup: plan.scheduler === 'SINGLE' ? run.id : null,
    retriedFromId: null,
  };
}
