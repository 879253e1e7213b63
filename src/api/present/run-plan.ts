import type { RunPlan } from '../../services/start-run.ts';
import { storedConfig } from '../../services/start-run.ts';
import { RUN_CONFIG_DEFAULTS } from '../../domain/run-config.ts';
import type { PresentContext } from './context.ts';
import { configExtras, presentStoredConfig } from './run-config.ts';
import { type Rep, rep } from './representation.ts';

/** `POST /me/runs/config`: the config filled in, with what a start would do. */
export function presentRunPlan(plan: RunPlan, context: PresentContext): Rep {
  const projectId = 'id' in plan.project ? plan.project.id : null;
  const usable = plan.devices.filter((entry) => entry.excludeReason === null);
  return presentStoredConfig(
    storedConfig(plan, projectId ?? 0),
    {
      runId: null,
      projectId,
      projectName: 'id' in plan.project ? plan.project.name : plan.project.newName,
      usedDeviceGroupName: plan.group?.displayName ?? null,
      runAvailable: usable.length > 0,
      computedDevices: usable.map((entry) => entry.device.id),
      maxTimeout: plan.maxTimeout,
      files: new Map(plan.files.map((entry) => [entry.file.id, entry.file])),
    },
    context,
    {
      // A project yet to be created has no id.
      projectId,
      excludedDevices: plan.devices
        .filter((entry) => entry.excludeReason !== null)
        .map((entry) =>
          rep('apiExcludedDevice', {
            deviceId: entry.device.id,
            displayName: entry.device.displayName,
            excludeReason: entry.excludeReason,
          }),
        ),
    },
  );
}

/**
 * `GET /me/runs/config`: what a run gets for each field its TestRunConfig leaves out
 * (docs/api.md#starting-runs), in the shape `POST /me/runs/config` answers, with nothing chosen yet:
 * no framework, project, devices or files, so nothing could run.
 */
export function presentRunConfigDefaults(maxTimeout: number, context: PresentContext): Rep {
  return rep('apiTestRunConfig', {
    osType: null,
    frameworkId: null,
    projectId: null,
    projectName: null,
    deviceGroupId: null,
    deviceIds: [],
    files: [],
    testRunName: null,
    timeout: Math.min(RUN_CONFIG_DEFAULTS.timeout, maxTimeout),
    testRunParameters: [],
    scheduler: RUN_CONFIG_DEFAULTS.scheduler,
    hookURL: null,
    maxAutoRetriesCount: RUN_CONFIG_DEFAULTS.maxAutoRetriesCount,
    deviceLanguageCode: RUN_CONFIG_DEFAULTS.deviceLanguageCode,
    limitationType: null,
    limitationValue: null,
    instrumentationRunner: null,
    withAnnotation: null,
    withoutAnnotation: null,
    applicationUsername: null,
    launchApp: RUN_CONFIG_DEFAULTS.launchApp,
    ...configExtras(
      {},
      {
        runId: null,
        projectId: null,
        projectName: null,
        usedDeviceGroupName: null,
        runAvailable: false,
        computedDevices: [],
        maxTimeout,
      },
      context,
    ),
    excludedDevices: [],
  });
}
