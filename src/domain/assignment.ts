/**
 * What an agent is told to do for one device run: the run's settings and secrets, the device run
 * and the run's input files, put together in one place (the agent protocol's Assignment).
 */
import { type Assignment, PROTOCOL_PREFIX } from '../protocol/v1.ts';
import type { UserFile } from './files.ts';
import { isExecutionKind } from './frameworks-kinds.ts';
import { type RunSecrets, type RunSettings, credentialsOfRun, deviceSettingsOfRun } from './run-settings.ts';
import type { DeviceRun } from './runs.ts';

export function assignmentOf(
  deviceRun: Pick<DeviceRun, 'id' | 'deviceId' | 'frameworkKind' | 'timeLimit'>,
  settings: RunSettings,
  secrets: RunSecrets | null,
  files: ReadonlyMap<number, UserFile>,
): Assignment {
  const { id: deviceRunId, deviceId } = deviceRun;
  return {
    deviceRunId,
    deviceId,
    // Device runs of runs from before execution kinds ran as server-side tests.
    kind:
      deviceRun.frameworkKind !== null && isExecutionKind(deviceRun.frameworkKind)
        ? deviceRun.frameworkKind
        : 'server-side',
    timeoutSeconds: deviceRun.timeLimit,
    locale: settings.deviceLanguageCode,
    launchApp: settings.launchApp,
    parameters: Object.fromEntries(settings.testRunParameters.map(({ key, value }) => [key, value])),
    credentials: credentialsOfRun(settings, secrets),
    deviceSettings: deviceSettingsOfRun(settings, secrets),
    video: settings.videoRecordingEnabled ?? true,
    files: settings.files.flatMap((ref) => {
      const file = files.get(ref.id);
      if (file === undefined) return [];
      return [
        {
          id: file.id,
          name: file.name,
          action: ref.action,
          size: file.size,
          sha256: file.sha256,
          properties: { ...file.properties },
          url: `${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/files/${file.id}`,
        },
      ];
    }),
  };
}
