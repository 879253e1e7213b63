/**
 * Sharing (docs/api.md#sharing): a project, device group or file shared by its owner with another
 * user (by e-mail) or with one of the owner's access groups. The rules here are pure; the store
 * answers who sees what.
 */
import { InvalidParameterError } from './errors.ts';
import type { ListSpec } from './list-query.ts';
import { checkEnum, checkText } from './text.ts';

export const SHARED_RESOURCE_TYPES = ['PROJECT', 'DEVICE_GROUP', 'FILE'] as const;
export type SharedResourceType = (typeof SHARED_RESOURCE_TYPES)[number];

/**
 * The established service's scopes say who may share with a group: its creator (USER), the
 * creator's whole account (ACCOUNT), everyone (GLOBAL, made by its operators). An account is one
 * user here, so USER and ACCOUNT mean the same; GLOBAL is not offered (docs/api.md#sharing).
 */
export const ACCESS_GROUP_SCOPES = ['USER', 'ACCOUNT'] as const;
export type AccessGroupScope = (typeof ACCESS_GROUP_SCOPES)[number];

export interface AccessGroup {
  readonly id: number;
  readonly userId: number;
  readonly userEmail: string;
  readonly name: string;
  readonly scope: AccessGroupScope;
  readonly createTime: number;
}

/** A member of an access group, as its owner sees it: who, not their account. */
export interface AccessGroupMember {
  readonly id: number;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
}

/** One share: what (type, id, name) is shared by whom with a user or an access group. */
export interface Share {
  readonly id: number;
  readonly ownerId: number;
  readonly type: SharedResourceType;
  readonly resourceId: number;
  readonly name: string;
  readonly userId: number | null;
  readonly userEmail: string | null;
  readonly accessGroupId: number | null;
  readonly createTime: number;
}

/** Who a record is shared with: a user named by e-mail, or an access group by id. */
export type ShareTarget = { readonly email: string } | { readonly accessGroupId: number };

export const ACCESS_GROUP_NAME_MAX = 255;

export function checkAccessGroupName(raw: string | undefined): string {
  if (raw === undefined) throw new InvalidParameterError('name', `Parameter 'name' is required`);
  return checkText('name', raw, { maxLength: ACCESS_GROUP_NAME_MAX, required: true });
}

export function checkAccessGroupScope(raw: string | undefined): AccessGroupScope {
  if (raw === undefined || raw.trim() === '') return 'USER';
  if (raw.trim().toUpperCase() === 'GLOBAL') {
    throw new InvalidParameterError(
      'scope',
      `Parameter 'scope' GLOBAL is not offered here: a group is its owner's (USER or ACCOUNT)`,
    );
  }
  return checkEnum('scope', raw, ACCESS_GROUP_SCOPES);
}

/** Exactly one of `email` and `accessGroupId`: the established clients send one or the other. */
export function checkShareTarget(input: { email?: string; accessGroupId?: string }): ShareTarget {
  const email = input.email?.trim() ?? '';
  const group = input.accessGroupId?.trim() ?? '';
  if (email !== '' && group !== '') {
    throw new InvalidParameterError('email', `Give either 'email' or 'accessGroupId', not both`);
  }
  if (group !== '') {
    if (!/^[1-9]\d{0,15}$/.test(group)) {
      throw new InvalidParameterError('accessGroupId', `Parameter 'accessGroupId' must be an id`);
    }
    return { accessGroupId: Number(group) };
  }
  if (email === '') {
    throw new InvalidParameterError('email', `Parameter 'email' (a user) or 'accessGroupId' (a group) is required`);
  }
  return { email };
}

export const ACCESS_GROUP_LIST: ListSpec<'id' | 'name' | 'scope' | 'createTime' | 'userId' | 'userEmail'> = {
  entity: 'access groups',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    scope: { type: 'enum', values: ['USER', 'ACCOUNT', 'GLOBAL'] },
    createTime: { type: 'date' },
    userId: { type: 'number' },
    userEmail: { type: 'string' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};

export const ACCESS_GROUP_MEMBER_LIST: ListSpec<'id' | 'email' | 'firstName' | 'lastName' | 'name'> = {
  entity: 'access group users',
  fields: {
    id: { type: 'number' },
    email: { type: 'string' },
    firstName: { type: 'string' },
    lastName: { type: 'string' },
    name: { type: 'string' },
  },
  defaultSort: [{ field: 'email', direction: 'asc' }],
};

export const SHARED_RESOURCE_LIST: ListSpec<'id' | 'name' | 'resourceId' | 'type'> = {
  entity: 'shared resources',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    resourceId: { type: 'number' },
    type: { type: 'enum', values: SHARED_RESOURCE_TYPES },
  },
  defaultSort: [{ field: 'id', direction: 'asc' }],
};
