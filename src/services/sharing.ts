/**
 * Sharing (docs/api.md#sharing): a user's access groups and their members, and sharing a project
 * or device group with another user or with an access group. Only the owner shares, unshares or
 * manages a group; every check is the owner's, so a foreign id is a 404 before any input is read.
 * What sharing opens is decided by the stores' `sharedWith` (src/store/sharing.ts).
 */
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import type { ListQuery } from '../domain/list-query.ts';
import {
  type ACCESS_GROUP_LIST,
  type ACCESS_GROUP_MEMBER_LIST,
  type AccessGroup,
  type AccessGroupMember,
  type SHARED_RESOURCE_LIST,
  type Share,
  type SharedResourceType,
  checkAccessGroupName,
  checkAccessGroupScope,
  checkShareTarget,
} from '../domain/sharing.ts';
import { type User, normalizeEmail } from '../domain/users.ts';
import type { Store } from '../store/store.ts';
import type { Context } from './context.ts';
import { requireProject } from './projects.ts';
import type { Page } from './views.ts';

type GroupField = keyof (typeof ACCESS_GROUP_LIST)['fields'];
type MemberField = keyof (typeof ACCESS_GROUP_MEMBER_LIST)['fields'];
type ResourceField = keyof (typeof SHARED_RESOURCE_LIST)['fields'];

export interface ShareInput {
  readonly email?: string;
  readonly accessGroupId?: string;
}

export async function createAccessGroup(
  ctx: Context,
  user: User,
  input: { name?: string; scope?: string },
): Promise<AccessGroup> {
  const name = checkAccessGroupName(input.name);
  const scope = checkAccessGroupScope(input.scope);
  return ctx.store.sharing.insertGroup(user.id, name, scope, ctx.clock());
}

export function listAccessGroups(ctx: Context, user: User, query: ListQuery<GroupField>): Promise<Page<AccessGroup>> {
  return ctx.store.sharing.listGroups(user.id, query);
}

/** Every user's access groups (operators: `GET /access-groups`). */
export function listAllAccessGroups(ctx: Context, query: ListQuery<GroupField>): Promise<Page<AccessGroup>> {
  return ctx.store.sharing.listGroups(null, query);
}

/** The user's own access group, or 404 for a missing and a foreign id alike (members do not see it). */
export async function requireAccessGroup(ctx: Context, user: User, id: number): Promise<AccessGroup> {
  const group = await ctx.store.sharing.findOwnedGroup(user.id, id);
  if (group === undefined) throw new NotFoundError('Access group', id);
  return group;
}

export async function updateAccessGroup(
  ctx: Context,
  user: User,
  id: number,
  input: { name?: string; scope?: string },
): Promise<AccessGroup> {
  const group = await requireAccessGroup(ctx, user, id);
  await ctx.store.sharing.updateGroup(group.id, {
    ...(input.name === undefined ? {} : { name: checkAccessGroupName(input.name) }),
    ...(input.scope === undefined ? {} : { scope: checkAccessGroupScope(input.scope) }),
  });
  return requireAccessGroup(ctx, user, id);
}

/** Deleting a group ends its shares: its members lose what it opened. */
export async function deleteAccessGroup(ctx: Context, user: User, id: number): Promise<void> {
  const group = await requireAccessGroup(ctx, user, id);
  await ctx.store.transaction(async (store) => {
    const { items } = await store.sharing.listGroupShares(group.id, ALL_SHARES);
    await store.sharing.deleteGroup(group.id);
    for (const share of items) await refreshShared(store, share.type, share.resourceId);
  });
}

export async function listAccessGroupUsers(
  ctx: Context,
  user: User,
  groupId: number,
  query: ListQuery<MemberField>,
): Promise<Page<AccessGroupMember>> {
  const group = await requireAccessGroup(ctx, user, groupId);
  return ctx.store.sharing.listMembers(group.id, query);
}

export async function getAccessGroupUser(
  ctx: Context,
  user: User,
  groupId: number,
  memberId: number,
): Promise<AccessGroupMember> {
  const group = await requireAccessGroup(ctx, user, groupId);
  const member = await ctx.store.sharing.findMember(group.id, memberId);
  if (member === undefined) throw new NotFoundError('User', memberId);
  return member;
}

/** Adds the user with that e-mail to the group; adding a member again changes nothing. */
export async function addAccessGroupUser(
  ctx: Context,
  user: User,
  groupId: number,
  input: { email?: string },
): Promise<AccessGroupMember> {
  const group = await requireAccessGroup(ctx, user, groupId);
  if (input.email === undefined || input.email.trim() === '')
    throw new InvalidParameterError('email', `Parameter 'email' is required: the e-mail of the user to add`);
  const member = await userByEmail(ctx, input.email);
  await ctx.store.sharing.addMember(group.id, member.id);
  return (await ctx.store.sharing.findMember(group.id, member.id))!;
}

/** Takes the user out of the group: what it opened closes for them at once. */
export async function removeAccessGroupUser(
  ctx: Context,
  user: User,
  groupId: number,
  memberId: number,
): Promise<void> {
  const group = await requireAccessGroup(ctx, user, groupId);
  if (!(await ctx.store.sharing.removeMember(group.id, memberId))) throw new NotFoundError('User', memberId);
}

export async function listAccessGroupResources(
  ctx: Context,
  user: User,
  groupId: number,
  query: ListQuery<ResourceField>,
): Promise<Page<Share>> {
  const group = await requireAccessGroup(ctx, user, groupId);
  return ctx.store.sharing.listGroupShares(group.id, query);
}

async function requireGroupShare(ctx: Context, user: User, groupId: number, shareId: number): Promise<Share> {
  const group = await requireAccessGroup(ctx, user, groupId);
  const share = await ctx.store.sharing.findShareById(shareId);
  if (share === undefined || share.accessGroupId !== group.id) throw new NotFoundError('Shared resource', shareId);
  return share;
}

export function getAccessGroupResource(ctx: Context, user: User, groupId: number, shareId: number): Promise<Share> {
  return requireGroupShare(ctx, user, groupId, shareId);
}

/** Unshares the record with the group. */
export async function removeAccessGroupResource(
  ctx: Context,
  user: User,
  groupId: number,
  shareId: number,
): Promise<void> {
  const share = await requireGroupShare(ctx, user, groupId, shareId);
  await ctx.store.transaction(async (store) => {
    await store.sharing.deleteShare(share.id);
    await refreshShared(store, share.type, share.resourceId);
  });
}

/** Shares the user's project; the owner alone may (a sharee gets 404, as for any project not theirs). */
export async function shareProject(ctx: Context, user: User, projectId: number, input: ShareInput): Promise<Share> {
  const project = await requireProject(ctx, user, projectId);
  return share(ctx, user, 'PROJECT', project.id, input);
}

export async function unshareProject(ctx: Context, user: User, projectId: number, input: ShareInput): Promise<void> {
  const project = await requireProject(ctx, user, projectId);
  await unshare(ctx, user, 'PROJECT', project.id, input);
}

/** Shares one of the user's device groups (public groups are everyone's already: 404 here). */
export async function shareDeviceGroup(ctx: Context, user: User, groupId: number, input: ShareInput): Promise<Share> {
  const group = await requireOwnedDeviceGroup(ctx, user, groupId);
  return share(ctx, user, 'DEVICE_GROUP', group, input);
}

export async function unshareDeviceGroup(ctx: Context, user: User, groupId: number, input: ShareInput): Promise<void> {
  const group = await requireOwnedDeviceGroup(ctx, user, groupId);
  await unshare(ctx, user, 'DEVICE_GROUP', group, input);
}

async function requireOwnedDeviceGroup(ctx: Context, user: User, id: number): Promise<number> {
  const group = await ctx.store.devices.findOwnedGroup(user.id, id);
  if (group === undefined) throw new NotFoundError('Device group', id);
  return group.id;
}

async function share(
  ctx: Context,
  user: User,
  type: SharedResourceType,
  resourceId: number,
  input: ShareInput,
): Promise<Share> {
  const target = await targetOf(ctx, user, input);
  return ctx.store.transaction(async (store) => {
    const existing = await store.sharing.findShare(type, resourceId, target);
    if (existing !== undefined) return existing;
    const made = await store.sharing.insertShare(user.id, type, resourceId, target, ctx.clock());
    await refreshShared(store, type, resourceId);
    return made;
  });
}

async function unshare(
  ctx: Context,
  user: User,
  type: SharedResourceType,
  resourceId: number,
  input: ShareInput,
): Promise<void> {
  const target = await targetOf(ctx, user, input);
  await ctx.store.transaction(async (store) => {
    const existing = await store.sharing.findShare(type, resourceId, target);
    if (existing === undefined) {
      throw new NotFoundError('Shared resource', 'email' in input && input.email ? input.email : input.accessGroupId);
    }
    await store.sharing.deleteShare(existing.id);
    await refreshShared(store, type, resourceId);
  });
}

/** The user or access group of a share: another registered user, or one of the caller's groups. */
async function targetOf(
  ctx: Context,
  user: User,
  input: ShareInput,
): Promise<{ userId: number } | { accessGroupId: number }> {
  const target = checkShareTarget(input);
  if ('accessGroupId' in target) {
    const group = await requireAccessGroup(ctx, user, target.accessGroupId);
    return { accessGroupId: group.id };
  }
  const sharee = await userByEmail(ctx, target.email);
  if (sharee.id === user.id)
    throw new InvalidParameterError('email', `'${sharee.email}' is your own: it owns this already`);
  return { userId: sharee.id };
}

async function userByEmail(ctx: Context, raw: string): Promise<User> {
  const email = normalizeEmail(raw);
  const found = await ctx.store.users.findByEmail(email);
  if (found === undefined) throw new InvalidParameterError('email', `No user has the e-mail '${email.slice(0, 254)}'`);
  return found;
}

/** Keeps the record's `shared` flag true while any share of it is left. */
async function refreshShared(store: Store, type: SharedResourceType, resourceId: number): Promise<void> {
  const shared = await store.sharing.isShared(type, resourceId);
  if (type === 'PROJECT') await store.projects.setShared(resourceId, shared);
  else if (type === 'DEVICE_GROUP') await store.devices.setGroupShared(resourceId, shared);
}

const ALL_SHARES: ListQuery<ResourceField> = {
  filters: [],
  sort: [{ field: 'id', direction: 'asc' }],
  search: '',
  limit: 0,
  offset: 0,
  raw: { sort: '', filter: [] },
};
