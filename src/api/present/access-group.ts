/**
 * Access groups, their members and what is shared with them (docs/api.md#sharing), in the fields
 * of the public clients' AccessGroup and SharedResource models. A member is shown as its group's
 * owner may see another user: who they are, never their account.
 */
import type { AccessGroup, AccessGroupMember, Share } from '../../domain/sharing.ts';
import { fullName } from '../../domain/users.ts';
import { type PresentContext, userPath } from './context.ts';
import { Id, SelfURI, Str, Time } from './fields.ts';
import { type Rep, entity, entitySchema } from './representation.ts';

export const ApiAccessGroup = entitySchema('apiAccessGroup', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  scope: Str,
  userId: Id,
  userEmail: Str,
  createTime: Time,
});

export const ApiAccessGroupUser = entitySchema('apiAccessGroupUser', {
  id: Id,
  selfURI: SelfURI,
  email: Str,
  firstName: Str,
  lastName: Str,
  name: Str,
});

export const ApiSharedResource = entitySchema('apiSharedResource', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  resourceId: Id,
  type: Str,
});

const RESOURCE_PATH = { PROJECT: 'projects', DEVICE_GROUP: 'device-groups', FILE: 'files' } as const;

const groupPath = (context: PresentContext, groupId: number) => `${userPath(context)}/access-groups/${groupId}`;

export function presentAccessGroup(group: AccessGroup): Rep {
  return entity(ApiAccessGroup, {
    id: group.id,
    selfURI: `/users/${group.userId}/access-groups/${group.id}`,
    name: group.name,
    scope: group.scope,
    userId: group.userId,
    userEmail: group.userEmail,
    createTime: group.createTime,
  });
}

export function presentAccessGroupUser(groupId: number, member: AccessGroupMember, context: PresentContext): Rep {
  return entity(ApiAccessGroupUser, {
    id: member.id,
    selfURI: `${groupPath(context, groupId)}/users/${member.id}`,
    email: member.email,
    firstName: member.firstName,
    lastName: member.lastName,
    name: fullName(member),
  });
}

/**
 * A share as the clients' SharedResource: its own id (the one `…/resources/{id}` takes), what it
 * opens and that record's name.
 */
export function presentSharedResource(share: Share, context: PresentContext): Rep {
  return entity(ApiSharedResource, {
    id: share.id,
    // A share with a user has no path of its own: it points at what it shares.
    selfURI:
      share.accessGroupId === null
        ? `/users/${share.ownerId}/${RESOURCE_PATH[share.type]}/${share.resourceId}`
        : `${groupPath(context, share.accessGroupId)}/resources/${share.id}`,
    name: share.name,
    resourceId: share.resourceId,
    type: share.type,
  });
}
