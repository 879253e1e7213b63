/**
 * The TestRunConfig a client sends to start a run (docs/api.md#starting-runs), checked field by field
 * into a normalised request. Only the shape is checked here; whether the ids exist and belong to
 * the user, and whether files suit the framework, is the start-run use case's work.
 */
import type { RunClient } from './clients.ts';
import { InvalidParameterError } from './errors.ts';
import { FILE_ACTIONS, type FileAction } from './files.ts';
import {
  DEFAULT_TIMEOUT_SECONDS,
  LIMITATION_TYPES,
  type LimitationType,
  MAX_AUTO_RETRIES,
  SCHEDULERS,
  type Scheduler,
} from './project-config.ts';
import { checkEnum, checkText } from './text.ts';
import { ENV_NAME, asBoolean, asHookUrl, asId, asInteger, asLanguageCode, asText } from './values.ts';

export interface RunFileRef {
  readonly id: number;
  /** null: decided from the file's type. */
  readonly action: FileAction | null;
}

export interface RunParameter {
  readonly key: string;
  readonly value: string;
}

export interface RunRequest {
  readonly osType: 'ANDROID' | 'IOS' | null;
  readonly frameworkId: number | null;
  readonly projectId: number | null;
  readonly projectName: string | null;
  readonly deviceGroupId: number | null;
  readonly deviceIds: readonly number[] | null;
  readonly files: readonly RunFileRef[] | null;
  readonly testRunName: string | null;
  readonly timeout: number | null;
  readonly testRunParameters: readonly RunParameter[];
  readonly hookURL: string | null;
  readonly maxAutoRetriesCount: number | null;
  readonly scheduler: Scheduler | null;
  readonly deviceLanguageCode: string | null;
  readonly limitationType: LimitationType | null;
  readonly limitationValue: string | null;
  readonly instrumentationRunner: string | null;
  readonly withAnnotation: string | null;
  readonly withoutAnnotation: string | null;
  readonly applicationUsername: string | null;
  readonly applicationPassword: string | null;
  readonly launchApp: boolean | null;
  /** Record a video of every device session (docs/api.md#videos); null: the project's setting, else on. */
  readonly videoRecordingEnabled: boolean | null;
  /** Device settings (private and enterprise clouds; domain/flavours.ts). */
  readonly deviceLocale: string | null;
  readonly wifiEnabled: boolean | null;
  readonly googleAccountEmail: string | null;
  readonly googleAccountPassword: string | null;
  /** Who asks (a header, not a config field): some clients may not start everything. */
  readonly client: RunClient;
}

/**
 * A run the cloud starts for a session of its own (Appium client side, interactive sessions): a
 * request that sets nothing but what the session names, so that the plan and the project config
 * decide the rest, as for any run.
 */
export function sessionRunRequest(
  fields: Pick<RunRequest, 'osType' | 'frameworkId' | 'projectName' | 'deviceIds' | 'client'> & Partial<RunRequest>,
): RunRequest {
  return {
    projectId: null,
    deviceGroupId: null,
    files: [],
    testRunName: null,
    timeout: null,
    testRunParameters: [],
    hookURL: null,
    maxAutoRetriesCount: 0,
    scheduler: null,
    deviceLanguageCode: null,
    limitationType: null,
    limitationValue: null,
    instrumentationRunner: null,
    withAnnotation: null,
    withoutAnnotation: null,
    applicationUsername: null,
    applicationPassword: null,
    launchApp: null,
    videoRecordingEnabled: null,
    deviceLocale: null,
    wifiEnabled: null,
    googleAccountEmail: null,
    googleAccountPassword: null,
    ...fields,
  };
}

/**
 * What a run gets for the fields its TestRunConfig leaves out (docs/api.md#starting-runs); the
 * start uses them and `GET /me/runs/config` shows them. The OS is the framework's when not given.
 */
export const RUN_CONFIG_DEFAULTS = {
  timeout: DEFAULT_TIMEOUT_SECONDS,
  scheduler: 'PARALLEL',
  maxAutoRetriesCount: 0,
  deviceLanguageCode: 'en_US',
  launchApp: true,
  videoRecordingEnabled: true,
} as const satisfies {
  timeout: number;
  scheduler: Scheduler;
  maxAutoRetriesCount: number;
  deviceLanguageCode: string;
  launchApp: boolean;
  videoRecordingEnabled: boolean;
};

/** Fields a request may carry; anything else is ignored, as the established API does. */
export const RUN_REQUEST_FIELDS = [
  'osType',
  'frameworkId',
  'projectId',
  'projectName',
  'deviceGroupId',
  'deviceIds',
  'files',
  'testRunName',
  'timeout',
  'testRunParameters',
  'hookURL',
  'maxAutoRetriesCount',
  'scheduler',
  'deviceLanguageCode',
  'limitationType',
  'limitationValue',
  'instrumentationRunner',
  'withAnnotation',
  'withoutAnnotation',
  'applicationUsername',
  'applicationPassword',
  'launchApp',
  'videoRecordingEnabled',
  'deviceLocale',
  'wifiEnabled',
  'googleAccountEmail',
  'googleAccountPassword',
] as const;

const EMAIL = /^[^\s@]+@[^\s@]+$/;

const MAX_DEVICES = 1000;
const MAX_FILES = 50;

export function parseRunRequest(raw: Readonly<Record<string, unknown>>, client: RunClient = 'api'): RunRequest {
  return {
    osType: optional(raw.osType, (v) => checkEnum('osType', asText('osType', v), ['ANDROID', 'IOS'] as const)),
    frameworkId: optional(raw.frameworkId, (v) => asId('frameworkId', v)),
    projectId: optional(raw.projectId, (v) => asId('projectId', v)),
    projectName: optional(raw.projectName, (v) =>
      checkText('projectName', asText('projectName', v), { maxLength: 255, required: true }),
    ),
    deviceGroupId: optional(raw.deviceGroupId, (v) => asId('deviceGroupId', v)),
    deviceIds: optional(raw.deviceIds, (v) => ids('deviceIds', v, MAX_DEVICES)),
    files: optional(raw.files, files),
    testRunName: optional(
      raw.testRunName,
      (v) => checkText('testRunName', asText('testRunName', v), { maxLength: 255 }) || null,
    ),
    timeout: optional(raw.timeout, (v) => asInteger('timeout', v, 1, Number.MAX_SAFE_INTEGER)),
    testRunParameters: optional(raw.testRunParameters, parameters) ?? [],
    hookURL: optional(raw.hookURL, (v) => asHookUrl('hookURL', v)),
    maxAutoRetriesCount: optional(raw.maxAutoRetriesCount, (v) =>
      asInteger('maxAutoRetriesCount', v, 0, MAX_AUTO_RETRIES),
    ),
    scheduler: optional(raw.scheduler, (v) => checkEnum('scheduler', asText('scheduler', v), SCHEDULERS)),
    deviceLanguageCode: optional(raw.deviceLanguageCode, (v) => asLanguageCode('deviceLanguageCode', v)),
    limitationType: optional(raw.limitationType, (v) =>
      checkEnum('limitationType', asText('limitationType', v), LIMITATION_TYPES),
    ),
    limitationValue: optional(
      raw.limitationValue,
      (v) => checkText('limitationValue', asText('limitationValue', v), { maxLength: 1024 }) || null,
    ),
    instrumentationRunner: optional(
      raw.instrumentationRunner,
      (v) => checkText('instrumentationRunner', asText('instrumentationRunner', v), { maxLength: 1024 }) || null,
    ),
    withAnnotation: optional(
      raw.withAnnotation,
      (v) => checkText('withAnnotation', asText('withAnnotation', v), { maxLength: 1024 }) || null,
    ),
    withoutAnnotation: optional(
      raw.withoutAnnotation,
      (v) => checkText('withoutAnnotation', asText('withoutAnnotation', v), { maxLength: 1024 }) || null,
    ),
    applicationUsername: optional(
      raw.applicationUsername,
      (v) => checkText('applicationUsername', asText('applicationUsername', v), { maxLength: 1024 }) || null,
    ),
    applicationPassword: optional(raw.applicationPassword, (v) => asText('applicationPassword', v) || null),
    launchApp: optional(raw.launchApp, (v) => asBoolean('launchApp', v)),
    videoRecordingEnabled: optional(raw.videoRecordingEnabled, (v) => asBoolean('videoRecordingEnabled', v)),
    deviceLocale: optional(raw.deviceLocale, (v) => asLanguageCode('deviceLocale', v)),
    wifiEnabled: optional(raw.wifiEnabled, (v) => asBoolean('wifiEnabled', v)),
    googleAccountEmail: optional(raw.googleAccountEmail, (v) => {
      const email = checkText('googleAccountEmail', asText('googleAccountEmail', v), {
        maxLength: 254,
        required: true,
      });
      if (!EMAIL.test(email))
        throw new InvalidParameterError(
          'googleAccountEmail',
          `Parameter 'googleAccountEmail' must be an e-mail address`,
        );
      return email;
    }),
    googleAccountPassword: optional(raw.googleAccountPassword, (v) =>
      checkText('googleAccountPassword', asText('googleAccountPassword', v), { maxLength: 1024 }),
    ),
    client,
  };
}

/** Whether the request names only a project: the legacy start that uses the stored project config. */
export function isLegacyRequest(request: RunRequest): boolean {
  return (
    request.frameworkId === null &&
    request.osType === null &&
    request.deviceGroupId === null &&
    request.deviceIds === null
  );
}

function optional<T>(value: unknown, parse: (value: unknown) => T): T | null {
  if (value === undefined || value === null || value === '') return null;
  return parse(value);
}

function ids(parameter: string, value: unknown, max: number): number[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [value];
  if (items.length === 0)
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' must list at least one id`);
  if (items.length > max)
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' may list at most ${max} ids`);
  return [...new Set(items.map((item) => asId(parameter, item)))];
}

/** `files` as objects (`{id, action}`), as bare ids, or as a comma-joined list of ids. */
function files(value: unknown): RunFileRef[] {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [value];
  if (items.length > MAX_FILES)
    throw new InvalidParameterError('files', `Parameter 'files' may list at most ${MAX_FILES} files`);
  return items.map((item) => {
    if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
      const entry = item as Record<string, unknown>;
      return {
        id: asId('files.id', entry.id),
        action: optional(entry.action, (v) => checkEnum('files.action', asText('files.action', v), FILE_ACTIONS)),
      };
    }
    return { id: asId('files', item), action: null };
  });
}

function parameters(value: unknown): RunParameter[] {
  if (!Array.isArray(value))
    throw new InvalidParameterError(
      'testRunParameters',
      `Parameter 'testRunParameters' must be a list of {key, value}`,
    );
  return value.map((item) => {
    const entry = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const key = typeof entry.key === 'string' ? entry.key.trim() : '';
    if (!ENV_NAME.test(key)) {
      throw new InvalidParameterError(
        'testRunParameters',
        `Test run parameter key '${String(entry.key).slice(0, 60)}' must be an environment variable name (letters, digits, _)`,
      );
    }
    return {
      key,
      value: checkText('testRunParameters', asText('testRunParameters', entry.value ?? ''), { maxLength: 4096 }),
    };
  });
}
