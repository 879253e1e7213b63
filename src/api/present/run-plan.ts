import type { RunPlan } from '../../services/start-run.ts';
import { storedConfig } from '../../services/start-run.ts';
import { presentStoredConfig } from './test-run.ts';
import { type Rep, rep } from './representation.ts';

/** `POST /me/runs/config`: the config filled in, with what a start would do. */
export function presentRunPlan(plan: RunPlan): Rep {
  const projectId = 'id' in plan.project ? plan.project.id : null;
  const config = presentStoredConfig(storedConfig(plan, projectId ?? 0), {
    projectId,
    projectName: 'id' in plan.project ? plan.project.name : plan.project.newName,
  });
  return rep('apiTestRunConfig', {
    ...config,
    runAvailable: plan.devices.some((entry) => entry.excludeReason === null),
    computedDevices: plan.devices.filter((entry) => entry.excludeReason === null).map((entry) => entry.device.id),
    excludedDevices: plan.devices
      .filter((entry) => entry.excludeReason !== null)
      .map((entry) =>
        rep('apiExcludedDevice', {
          deviceId: entry.device.id,
          displayName: entry.device.displayName,
          excludeReason: entry.excludeReason,
        }),
      ),
    maxTestTimeout: rep('apiTimeout', { unit: 'SECONDS', value: plan.maxTimeout }),
  });
}
