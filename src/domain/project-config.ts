/**
 * The legacy project configuration of the "mode" era (docs/api.md#project-config): which kind of
 * test the project runs, on which device group, with which options. Pure rules: defaults per
 * project type, and checking a change sent as form parameters.
 */
import { InvalidParameterError } from './errors.ts';
import { type ProjectType, osFamilyOfType } from './projects.ts';
import { checkEnum, checkText } from './text.ts';
import { ENV_NAME, asBoolean, asHookUrl, asId, asInteger, asLanguageCode } from './values.ts';

export const MODES = [
  'FULL_RUN',
  'IOS',
  'APP_CRAWLER',
  'IOS_CRAWLER',
  'UIAUTOMATOR',
  'CALABASH',
  'CALABASH_IOS',
  'APPIUM_ANDROID',
  'APPIUM_IOS',
  'XCTEST',
  'XCUITEST',
  'GENERIC',
] as const;
export type Mode = (typeof MODES)[number];

export const SCHEDULERS = ['PARALLEL', 'SERIAL', 'SINGLE'] as const;
export type Scheduler = (typeof SCHEDULERS)[number];

export const LIMITATION_TYPES = ['PACKAGE', 'CLASS'] as const;
export type LimitationType = (typeof LIMITATION_TYPES)[number];

export const DEFAULT_TIMEOUT_SECONDS = 600;
export const MAX_AUTO_RETRIES = 5;

export interface ProjectConfig {
  readonly projectId: number;
  readonly mode: Mode;
  readonly usedDeviceGroupId: number | null;
  readonly scheduler: Scheduler;
  /** Seconds. */
  readonly timeout: number;
  readonly deviceLanguageCode: string;
  readonly hookURL: string | null;
  readonly instrumentationRunner: string | null;
  readonly limitationType: LimitationType | null;
  readonly limitationValue: string | null;
  readonly withAnnotation: string | null;
  readonly withoutAnnotation: string | null;
  readonly applicationUsername: string | null;
  readonly applicationPassword: string | null;
  readonly autoScreenshots: boolean;
  readonly screenshotDir: string;
  readonly launchApp: boolean;
  readonly videoRecordingEnabled: boolean;
  readonly maxAutoRetriesCount: number;
}

/** The OS family each mode runs on; GENERIC runs on either. */
export function osFamilyOfMode(mode: Mode): 'ANDROID' | 'IOS' | null {
  switch (mode) {
    case 'FULL_RUN':
    case 'APP_CRAWLER':
    case 'UIAUTOMATOR':
    case 'CALABASH':
    case 'APPIUM_ANDROID':
      return 'ANDROID';
    case 'IOS':
    case 'IOS_CRAWLER':
    case 'CALABASH_IOS':
    case 'APPIUM_IOS':
    case 'XCTEST':
    case 'XCUITEST':
      return 'IOS';
    case 'GENERIC':
      return null;
  }
}

const DEFAULT_MODE: Readonly<Record<ProjectType, Mode>> = {
  ANDROID: 'FULL_RUN',
  IOS: 'IOS',
  UIAUTOMATOR: 'UIAUTOMATOR',
  CALABASH: 'CALABASH',
  CALABASH_IOS: 'CALABASH_IOS',
  XCTEST: 'XCTEST',
  XCUITEST: 'XCUITEST',
  APPIUM_ANDROID: 'APPIUM_ANDROID',
  APPIUM_IOS: 'APPIUM_IOS',
  GENERIC: 'GENERIC',
};

export function defaultConfig(projectId: number, type: ProjectType): ProjectConfig {
  return {
    projectId,
    mode: DEFAULT_MODE[type],
    usedDeviceGroupId: null,
    scheduler: 'PARALLEL',
    timeout: DEFAULT_TIMEOUT_SECONDS,
    deviceLanguageCode: 'en_US',
    hookURL: null,
    instrumentationRunner: null,
    limitationType: null,
    limitationValue: null,
    withAnnotation: null,
    withoutAnnotation: null,
    applicationUsername: null,
    applicationPassword: null,
    autoScreenshots: false,
    screenshotDir: '/sdcard/test-screenshots',
    launchApp: true,
    // On, as the established service has it (docs/api.md#videos).
    videoRecordingEnabled: true,
    maxAutoRetriesCount: 0,
  };
}

/** A change as it arrives: form parameters are text, JSON may carry numbers and booleans. */
export type RawConfigChange = Partial<Record<keyof ProjectConfig, string | number | boolean | null>>;

export interface ConfigContext {
  readonly projectType: ProjectType;
  /** Longest timeout the owner's plan allows, seconds. */
  readonly maxTimeout: number;
}

/**
 * Applies a change to a config. Throws InvalidParameterError naming the first bad parameter.
 * `usedDeviceGroupId` is only parsed here; whether the user may use that group is the service's check.
 */
export function applyConfigChange(
  current: ProjectConfig,
  change: RawConfigChange,
  context: ConfigContext,
): ProjectConfig {
  const next: { -readonly [K in keyof ProjectConfig]: ProjectConfig[K] } = { ...current };
  if (change.mode !== undefined) next.mode = checkMode(enumText('mode', change.mode), context.projectType);
  if (change.usedDeviceGroupId !== undefined)
    next.usedDeviceGroupId =
      change.usedDeviceGroupId === null || change.usedDeviceGroupId === ''
        ? null
        : asId('usedDeviceGroupId', change.usedDeviceGroupId, 'a device group id');
  if (change.scheduler !== undefined)
    next.scheduler = checkEnum('scheduler', enumText('scheduler', change.scheduler), SCHEDULERS);
  if (change.timeout !== undefined)
    next.timeout = asInteger('timeout', change.timeout, 1, context.maxTimeout, ' (seconds; the most your plan allows)');
  if (change.deviceLanguageCode !== undefined)
    next.deviceLanguageCode = asLanguageCode('deviceLanguageCode', change.deviceLanguageCode);
  if (change.hookURL !== undefined)
    next.hookURL = change.hookURL === null ? null : asHookUrl('hookURL', change.hookURL);
  if (change.instrumentationRunner !== undefined)
    next.instrumentationRunner = optionalText('instrumentationRunner', change.instrumentationRunner);
  if (change.limitationType !== undefined) {
    const text = optionalText('limitationType', change.limitationType);
    next.limitationType = text === null ? null : checkEnum('limitationType', text, LIMITATION_TYPES);
  }
  if (change.limitationValue !== undefined)
    next.limitationValue = optionalText('limitationValue', change.limitationValue);
  if (change.withAnnotation !== undefined) next.withAnnotation = optionalText('withAnnotation', change.withAnnotation);
  if (change.withoutAnnotation !== undefined)
    next.withoutAnnotation = optionalText('withoutAnnotation', change.withoutAnnotation);
  if (change.applicationUsername !== undefined)
    next.applicationUsername = optionalText('applicationUsername', change.applicationUsername);
  if (change.applicationPassword !== undefined)
    next.applicationPassword = optionalText('applicationPassword', change.applicationPassword);
  if (change.autoScreenshots !== undefined) next.autoScreenshots = asBoolean('autoScreenshots', change.autoScreenshots);
  if (change.screenshotDir !== undefined)
    next.screenshotDir = optionalText('screenshotDir', change.screenshotDir) ?? current.screenshotDir;
  if (change.launchApp !== undefined) next.launchApp = asBoolean('launchApp', change.launchApp);
  if (change.videoRecordingEnabled !== undefined)
    next.videoRecordingEnabled = asBoolean('videoRecordingEnabled', change.videoRecordingEnabled);
  if (change.maxAutoRetriesCount !== undefined) {
    next.maxAutoRetriesCount = asInteger('maxAutoRetriesCount', change.maxAutoRetriesCount, 0, MAX_AUTO_RETRIES);
  }
  if (next.limitationValue !== null && next.limitationType === null) {
    throw new InvalidParameterError(
      'limitationType',
      `Parameter 'limitationType' (${LIMITATION_TYPES.join(' or ')}) is required with 'limitationValue'`,
    );
  }
  return next;
}

function checkMode(text: string, projectType: ProjectType): Mode {
  const mode = checkEnum('mode', text, MODES);
  // docs/api.md#project-config: the iOS crawler runs only in projects of the iOS UI Automation type.
  if (mode === 'IOS_CRAWLER' && projectType !== 'IOS') {
    throw new InvalidParameterError(
      'mode',
      `Mode IOS_CRAWLER needs a project of type IOS (iOS UI Automation); this project is of type ${projectType}`,
    );
  }
  const projectOs = osFamilyOfType(projectType);
  const modeOs = osFamilyOfMode(mode);
  if (projectOs !== null && modeOs !== null && projectOs !== modeOs) {
    throw new InvalidParameterError(
      'mode',
      `Mode ${mode} runs on ${modeOs} devices and cannot be used in a project of type ${projectType}`,
    );
  }
  return mode;
}

function enumText(parameter: string, value: string | number | boolean | null): string {
  if (typeof value !== 'string') throw new InvalidParameterError(parameter, `Parameter '${parameter}' must be text`);
  return value;
}

function optionalText(parameter: string, value: string | number | boolean | null): string | null {
  if (value === null) return null;
  const text = checkText(parameter, String(value), { maxLength: 1024 });
  return text === '' ? null : text;
}

/** Key/value parameters handed to tests as environment variables. */
export interface ConfigParameter {
  readonly id: number;
  readonly projectId: number;
  readonly key: string;
  readonly value: string;
}

export function checkConfigParameter(input: { key?: string; value?: string }): { key: string; value: string } {
  const key = (input.key ?? '').trim();
  if (!ENV_NAME.test(key)) {
    throw new InvalidParameterError(
      'key',
      `Parameter 'key' must be an environment variable name (letters, digits, _; not starting with a digit)`,
    );
  }
  return { key, value: checkText('value', input.value ?? '', { maxLength: 4096 }) };
}
