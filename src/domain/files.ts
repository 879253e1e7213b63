/** Uploaded and produced files (docs/api.md#files). */
import type { ListSpec } from './list-query.ts';

export const FILE_INPUT_TYPES = ['APPLICATION', 'TEST', 'DATA'] as const;
export type FileInputType = (typeof FILE_INPUT_TYPES)[number];

export const FILE_DIRECTIONS = ['INPUT', 'OUTPUT'] as const;
export type FileDirection = (typeof FILE_DIRECTIONS)[number];

export const FILE_STATES = ['PREPARING', 'READY'] as const;
export type FileState = (typeof FILE_STATES)[number];

/** What a run does with an input file. */
export const FILE_ACTIONS = ['INSTALL', 'RUN_TEST', 'COPY_TO_DEVICE'] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];

/** Legacy per-project upload slots (`/me/projects/{id}/files/application|test|data`). */
export const PROJECT_FILE_SLOTS = ['application', 'test', 'data'] as const;
export type ProjectFileSlot = (typeof PROJECT_FILE_SLOTS)[number];

/** Tags of output files, filterable with `?tag[]=`. */
export const OUTPUT_TAGS = ['junit', 'logs', 'screenshot', 'performance', 'video', 'output'] as const;

export interface UserFile {
  readonly id: number;
  readonly userId: number;
  readonly projectId: number | null;
  readonly projectSlot: ProjectFileSlot | null;
  readonly deviceRunId: number | null;
  readonly name: string;
  readonly size: number;
  readonly mimetype: string;
  readonly sha256: string;
  readonly blobKey: string;
  readonly state: FileState;
  readonly direction: FileDirection;
  readonly inputType: FileInputType | null;
  readonly osType: 'ANDROID' | 'IOS' | null;
  /** The same bytes were uploaded by this user before. */
  readonly duplicate: boolean;
  readonly properties: Readonly<Record<string, string>>;
  readonly tags: readonly string[];
  readonly createTime: number;
}

export function defaultAction(inputType: FileInputType | null): FileAction {
  switch (inputType) {
    case 'APPLICATION':
      return 'INSTALL';
    case 'TEST':
      return 'RUN_TEST';
    default:
      return 'COPY_TO_DEVICE';
  }
}

export function inputTypeOfSlot(slot: ProjectFileSlot): FileInputType {
  return slot === 'application' ? 'APPLICATION' : slot === 'test' ? 'TEST' : 'DATA';
}

/** The name a downloaded file is saved under: no path, no quotes or control characters. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f"\u007f]/g, '_').trim();
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? 'file' : cleaned.slice(0, 255);
}

export const FILE_LIST: ListSpec<
  | 'id'
  | 'name'
  | 'size'
  | 'createTime'
  | 'state'
  | 'direction'
  | 'inputType'
  | 'mimetype'
  | 'userId'
  | 'duplicate'
  | 'userEmail'
  | 'shared'
> = {
  entity: 'files',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    size: { type: 'number' },
    createTime: { type: 'date' },
    state: { type: 'enum', values: FILE_STATES },
    direction: { type: 'enum', values: FILE_DIRECTIONS },
    inputType: { type: 'enum', values: FILE_INPUT_TYPES },
    mimetype: { type: 'string' },
    userId: { type: 'number' },
    duplicate: { type: 'boolean' },
    userEmail: { type: 'string' },
    shared: { type: 'boolean' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};
