import type { ConfigParameter } from '../../domain/project-config.ts';
import type { ConfigView } from '../../services/project-config.ts';
import { type PresentContext, userPath } from './context.ts';
import { type Rep, rep } from './representation.ts';

export function presentProjectConfig(view: ConfigView, context: PresentContext): Rep {
  const { config } = view;
  return rep('apiProjectConfig', {
    id: config.projectId,
    selfURI: `${userPath(context)}/projects/${config.projectId}/config`,
    projectId: config.projectId,
    mode: config.mode,
    usedDeviceGroupId: config.usedDeviceGroupId,
    usedDeviceGroupName: view.usedDeviceGroupName,
    scheduler: config.scheduler,
    timeout: config.timeout,
    deviceLanguageCode: config.deviceLanguageCode,
    hookURL: config.hookURL,
    instrumentationRunner: config.instrumentationRunner,
    limitationType: config.limitationType,
    limitationValue: config.limitationValue,
    withAnnotation: config.withAnnotation,
    withoutAnnotation: config.withoutAnnotation,
    applicationUsername: config.applicationUsername,
    applicationPassword: config.applicationPassword,
    autoScreenshots: config.autoScreenshots,
    screenshotDir: config.screenshotDir,
    launchApp: config.launchApp,
    videoRecordingEnabled: config.videoRecordingEnabled,
    maxAutoRetriesCount: config.maxAutoRetriesCount,
    runAvailable: view.runAvailable,
  });
}

export function presentConfigParameter(parameter: ConfigParameter, context: PresentContext): Rep {
  return rep('apiTestRunParameter', {
    id: parameter.id,
    selfURI: `${userPath(context)}/projects/${parameter.projectId}/config/parameters/${parameter.id}`,
    key: parameter.key,
    value: parameter.value,
  });
}
