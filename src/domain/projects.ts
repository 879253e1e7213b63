/** Projects: their types, the OS a type implies, archiving, and the list grammar they accept. */
import { InvalidParameterError } from './errors.ts';
import type { ListSpec } from './list-query.ts';
import { checkEnum, checkText } from './text.ts';

export const OS_TYPES = ['ANDROID', 'IOS', 'UNDEFINED'] as const;
export type OsType = (typeof OS_TYPES)[number];

/** Legacy project types. `IOS` is the "iOS UI Automation" type (docs/api.md#projects). */
export const PROJECT_TYPES = [
  'ANDROID',
  'IOS',
  'UIAUTOMATOR',
  'CALABASH',
  'CALABASH_IOS',
  'XCTEST',
  'XCUITEST',
  'APPIUM_ANDROID',
  'APPIUM_IOS',
  'GENERIC',
] as const;
export type ProjectType = (typeof PROJECT_TYPES)[number];

export const DEFAULT_PROJECT_TYPE: ProjectType = 'ANDROID';

/** The OS family a project type is bound to; GENERIC projects may run either. */
export function osFamilyOfType(type: ProjectType): 'ANDROID' | 'IOS' | null {
  switch (type) {
    case 'ANDROID':
    case 'UIAUTOMATOR':
    case 'CALABASH':
    case 'APPIUM_ANDROID':
      return 'ANDROID';
    case 'IOS':
    case 'CALABASH_IOS':
    case 'XCTEST':
    case 'XCUITEST':
    case 'APPIUM_IOS':
      return 'IOS';
    case 'GENERIC':
      return null;
  }
}

export const ARCHIVING_STRATEGIES = ['NEVER', 'DAYS', 'RUNS'] as const;
export type ArchivingStrategy = (typeof ARCHIVING_STRATEGIES)[number];
export const DEFAULT_ARCHIVING_ITEM_COUNT = 120;

export interface Project {
  readonly id: number;
  readonly userId: number;
  readonly name: string;
  readonly description: string | null;
  readonly type: ProjectType;
  /** UNDEFINED until the first run decides it. */
  readonly osType: OsType;
  readonly createTime: number;
  readonly archiveTime: number | null;
  readonly archivingStrategy: ArchivingStrategy;
  readonly archivingItemCount: number;
  readonly common: boolean;
  readonly shared: boolean;
  readonly readOnly: boolean;
  /** The owner's e-mail, where the store read it (records a sharee may see: docs/api.md#sharing). */
  readonly ownerEmail?: string;
}

export interface NewProject {
  readonly name: string;
  readonly description: string | null;
  readonly type: ProjectType;
}

export interface ProjectChanges {
  readonly name?: string;
  readonly description?: string | null;
  readonly archivingStrategy?: ArchivingStrategy;
  readonly archivingItemCount?: number;
}

const NAME_RULE = { maxLength: 255 } as const;
const DESCRIPTION_RULE = { maxLength: 4000 } as const;

/** Checks the parameters of a project creation. An empty name gets a generated one (docs/api.md#projects). */
export function checkNewProject(
  input: { name?: string; description?: string; type?: string },
  now: number,
): NewProject {
  const name = checkText('name', input.name ?? '', NAME_RULE);
  const description =
    input.description === undefined ? null : checkText('description', input.description, DESCRIPTION_RULE);
  return {
    name: name === '' ? generatedName(now) : name,
    description: description === '' ? null : description,
    type:
      input.type === undefined || input.type === ''
        ? DEFAULT_PROJECT_TYPE
        : checkEnum('type', input.type, PROJECT_TYPES),
  };
}

export function checkProjectChanges(input: {
  name?: string;
  description?: string;
  archivingStrategy?: string;
  archivingItemCount?: string | number;
}): ProjectChanges {
  const changes: {
    name?: string;
    description?: string | null;
    archivingStrategy?: ArchivingStrategy;
    archivingItemCount?: number;
  } = {};
  if (input.name !== undefined) changes.name = checkText('name', input.name, { ...NAME_RULE, required: true });
  if (input.description !== undefined) {
    const description = checkText('description', input.description, DESCRIPTION_RULE);
    changes.description = description === '' ? null : description;
  }
  if (input.archivingStrategy !== undefined) {
    changes.archivingStrategy = checkEnum('archivingStrategy', input.archivingStrategy, ARCHIVING_STRATEGIES);
  }
  if (input.archivingItemCount !== undefined) {
    const count = Number(input.archivingItemCount);
    if (!Number.isInteger(count) || count < 1 || count > 100_000) {
      throw new InvalidParameterError(
        'archivingItemCount',
        `Parameter 'archivingItemCount' must be an integer between 1 and 100000`,
      );
    }
    changes.archivingItemCount = count;
  }
  return changes;
}

function generatedName(now: number): string {
  return `Project ${new Date(now).toISOString().slice(0, 16).replace('T', ' ')}`;
}

export const PROJECT_LIST: ListSpec<
  | 'id'
  | 'name'
  | 'description'
  | 'type'
  | 'osType'
  | 'createTime'
  | 'archiveTime'
  | 'archivingStrategy'
  | 'archivingItemCount'
  | 'common'
  | 'shared'
  | 'sharedWithCaller'
  | 'sharedById'
  | 'sharedByEmail'
  | 'readOnly'
  | 'successRatio'
  | 'userId'
  | 'userEmail'
  | 'testRunCount'
> = {
  entity: 'projects',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    description: { type: 'string' },
    type: { type: 'enum', values: PROJECT_TYPES },
    osType: { type: 'enum', values: OS_TYPES },
    createTime: { type: 'date' },
    archiveTime: { type: 'date' },
    archivingStrategy: { type: 'enum', values: ARCHIVING_STRATEGIES },
    archivingItemCount: { type: 'number' },
    common: { type: 'boolean' },
    // Seen from the caller: a project another user shared with them (docs/api.md#sharing).
    shared: { type: 'boolean' },
    sharedWithCaller: { type: 'boolean' },
    sharedById: { type: 'number' },
    sharedByEmail: { type: 'string' },
    readOnly: { type: 'boolean' },
    successRatio: { type: 'decimal' },
    userId: { type: 'number' },
    userEmail: { type: 'string' },
    testRunCount: { type: 'number' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};

/** How many recent test runs the project listing embeds per project (`embedRuns`). */
export const DEFAULT_EMBEDDED_RUNS = 10;
export const MAX_EMBEDDED_RUNS = 100;
