import { type Framework, frameworkOfMode } from '../../domain/frameworks.ts';
import type { ConfigParameter, ProjectConfig } from '../../domain/project-config.ts';
import type { ConfigView } from '../../services/project-config.ts';
import { type PresentContext, userPath } from './context.ts';
import { AlwaysNull, Bool, Count, Id, MaybeStr, SelfURI, Str } from './fields.ts';
import { Nullable, type Rep, entity, entitySchema } from './representation.ts';

export const ApiProjectConfig = entitySchema('apiProjectConfig', {
  id: Id,
  selfURI: SelfURI,
  projectId: Id,
  mode: Str,
  usedDeviceGroupId: Nullable(Id),
  usedDeviceGroupName: MaybeStr,
  scheduler: Str,
  timeout: Count,
  deviceLanguageCode: Str,
  hookURL: MaybeStr,
  instrumentationRunner: MaybeStr,
  limitationType: MaybeStr,
  limitationValue: MaybeStr,
  withAnnotation: MaybeStr,
  withoutAnnotation: MaybeStr,
  applicationUsername: MaybeStr,
  applicationPassword: MaybeStr,
  autoScreenshots: Bool,
  screenshotDir: Str,
  launchApp: Bool,
  videoRecordingEnabled: Bool,
  maxAutoRetriesCount: Count,
  runAvailable: Bool,
  creditsPrice: Count,
  uiAutomatorTestClasses: AlwaysNull,
  checkApp: Bool,
  appRequired: Bool,
});

export const ApiTestRunParameter = entitySchema('apiTestRunParameter', {
  id: Id,
  selfURI: SelfURI,
  key: Str,
  value: Str,
});

export function presentProjectConfig(view: ConfigView, context: PresentContext): Rep {
  const { config } = view;
  return entity(ApiProjectConfig, {
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
    // Nothing is billed; UI Automator classes are chosen with limitationType/limitationValue; an
    // app is checked when uploaded (docs/api.md#files), not again before a run.
    creditsPrice: 0,
    uiAutomatorTestClasses: null,
    checkApp: false,
    // Whether the mode's framework installs an app (the generic ones are alike on both OSes).
    appRequired: (modeFramework(config.mode)?.requiredAppExtensions.length ?? 0) > 0,
  });
}

/** The framework of a stored mode; none for a mode this release does not know. */
function modeFramework(mode: ProjectConfig['mode']): Framework | undefined {
  return frameworkOfMode(mode, 'ANDROID') as Framework | undefined;
}

export function presentConfigParameter(parameter: ConfigParameter, context: PresentContext): Rep {
  return entity(ApiTestRunParameter, {
    id: parameter.id,
    selfURI: `${userPath(context)}/projects/${parameter.projectId}/config/parameters/${parameter.id}`,
    key: parameter.key,
    value: parameter.value,
  });
}
