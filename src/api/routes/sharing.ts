/**
 * Sharing (docs/api.md#sharing): the user's access groups with their members and shared
 * resources, `…/share` on projects and device groups (POST shares, DELETE unshares), and the
 * operators' list of every access group.
 */
import Type from 'typebox';
import { ACCESS_GROUP_LIST, ACCESS_GROUP_MEMBER_LIST, SHARED_RESOURCE_LIST } from '../../domain/sharing.ts';
import {
  addAccessGroupUser,
  createAccessGroup,
  deleteAccessGroup,
  getAccessGroupResource,
  getAccessGroupUser,
  listAccessGroupResources,
  listAccessGroupUsers,
  listAccessGroups,
  listAllAccessGroups,
  removeAccessGroupResource,
  removeAccessGroupUser,
  requireAccessGroup,
  shareDeviceGroup,
  shareProject,
  unshareDeviceGroup,
  unshareProject,
  updateAccessGroup,
} from '../../services/sharing.ts';
import {
  ApiAccessGroup,
  ApiAccessGroupUser,
  ApiSharedResource,
  presentAccessGroup,
  presentAccessGroupUser,
  presentSharedResource,
} from '../present/access-group.ts';
import { listSchema, storedList } from '../present/list.ts';
import { type RouteSpec, created, noContent, ok, page, route } from '../route.ts';
import { NoInput, Text } from '../schemas.ts';

const TAGS = ['Sharing'];
const GROUP = '/me/access-groups/:accessGroupId';

const GroupInput = Type.Object({
  name: Type.Optional(Text('Group name', 1000)),
  scope: Type.Optional(Text('USER or ACCOUNT (the same here: an account is one user); default USER', 20)),
});

const ShareInput = Type.Object({
  email: Type.Optional(Text('E-mail of the user to share with (or accessGroupId)', 1000)),
  accessGroupId: Type.Optional(Text('Id of one of your access groups to share with (or email)', 20)),
});

export const sharingRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/access-groups',
    summary: "List the user's access groups",
    tags: TAGS,
    answers: { 200: listSchema(ApiAccessGroup) },
    list: storedList(ACCESS_GROUP_LIST, ['selfURI']),
    handle: async ({ ctx, user, list }) => {
      const found = await listAccessGroups(ctx, user, list);
      return page(found.items.map(presentAccessGroup), found.total);
    },
  }),
  route({
    method: 'POST',
    path: '/me/access-groups',
    summary: 'Create an access group (people to share with at once)',
    tags: TAGS,
    answers: { 201: ApiAccessGroup },
    input: GroupInput,
    handle: async ({ ctx, user, input }) => created(presentAccessGroup(await createAccessGroup(ctx, user, input))),
  }),
  route({
    method: 'GET',
    path: GROUP,
    summary: 'Read an access group',
    tags: TAGS,
    answers: { 200: ApiAccessGroup },
    handle: async ({ ctx, user, params }) =>
      ok(presentAccessGroup(await requireAccessGroup(ctx, user, params.accessGroupId))),
  }),
  route({
    method: 'POST',
    path: GROUP,
    summary: 'Rename an access group or change its scope',
    tags: TAGS,
    answers: { 200: ApiAccessGroup },
    input: GroupInput,
    handle: async ({ ctx, user, params, input }) =>
      ok(presentAccessGroup(await updateAccessGroup(ctx, user, params.accessGroupId, input))),
  }),
  route({
    method: 'DELETE',
    path: GROUP,
    summary: 'Delete an access group: what it shared is no longer shared with its members',
    tags: TAGS,
    answers: { 204: 'empty' },
    input: NoInput,
    handle: async ({ ctx, user, params }) => {
      await deleteAccessGroup(ctx, user, params.accessGroupId);
      return noContent();
    },
  }),
  route({
    method: 'GET',
    path: `${GROUP}/users`,
    summary: "List an access group's members",
    tags: TAGS,
    answers: { 200: listSchema(ApiAccessGroupUser) },
    list: storedList(ACCESS_GROUP_MEMBER_LIST, ['selfURI']),
    handle: async ({ ctx, user, params, present, list }) => {
      const found = await listAccessGroupUsers(ctx, user, params.accessGroupId, list);
      return page(
        found.items.map((member) => presentAccessGroupUser(params.accessGroupId, member, present)),
        found.total,
      );
    },
  }),
  route({
    method: 'POST',
    path: `${GROUP}/users`,
    summary: 'Add a user (by e-mail) to an access group',
    tags: TAGS,
    answers: { 200: ApiAccessGroupUser },
    input: Type.Object({ email: Type.Optional(Text('E-mail of the user to add', 1000)) }),
    handle: async ({ ctx, user, params, input, present }) => {
      const member = await addAccessGroupUser(ctx, user, params.accessGroupId, input);
      return ok(presentAccessGroupUser(params.accessGroupId, member, present));
    },
  }),
  route({
    method: 'GET',
    path: `${GROUP}/users/:memberId`,
    summary: 'Read a member of an access group',
    tags: TAGS,
    answers: { 200: ApiAccessGroupUser },
    handle: async ({ ctx, user, params, present }) =>
      ok(
        presentAccessGroupUser(
          params.accessGroupId,
          await getAccessGroupUser(ctx, user, params.accessGroupId, params.memberId),
          present,
        ),
      ),
  }),
  route({
    method: 'DELETE',
    path: `${GROUP}/users/:memberId`,
    summary: 'Remove a member from an access group: what the group shares closes for them',
    tags: TAGS,
    answers: { 204: 'empty' },
    input: NoInput,
    handle: async ({ ctx, user, params }) => {
      await removeAccessGroupUser(ctx, user, params.accessGroupId, params.memberId);
      return noContent();
    },
  }),
  route({
    method: 'GET',
    path: `${GROUP}/resources`,
    summary: 'List what is shared with an access group',
    tags: TAGS,
    answers: { 200: listSchema(ApiSharedResource) },
    list: storedList(SHARED_RESOURCE_LIST, ['selfURI']),
    handle: async ({ ctx, user, params, present, list }) => {
      const found = await listAccessGroupResources(ctx, user, params.accessGroupId, list);
      return page(
        found.items.map((share) => presentSharedResource(share, present)),
        found.total,
      );
    },
  }),
  route({
    method: 'GET',
    path: `${GROUP}/resources/:sharedResourceId`,
    summary: 'Read something shared with an access group',
    tags: TAGS,
    answers: { 200: ApiSharedResource },
    handle: async ({ ctx, user, params, present }) =>
      ok(
        presentSharedResource(
          await getAccessGroupResource(ctx, user, params.accessGroupId, params.sharedResourceId),
          present,
        ),
      ),
  }),
  route({
    method: 'DELETE',
    path: `${GROUP}/resources/:sharedResourceId`,
    summary: 'Stop sharing something with an access group',
    tags: TAGS,
    answers: { 204: 'empty' },
    input: NoInput,
    handle: async ({ ctx, user, params }) => {
      await removeAccessGroupResource(ctx, user, params.accessGroupId, params.sharedResourceId);
      return noContent();
    },
  }),
  route({
    method: 'GET',
    path: '/access-groups',
    summary: "List every user's access groups (operators)",
    tags: TAGS,
    access: 'admin',
    answers: { 200: listSchema(ApiAccessGroup) },
    list: storedList(ACCESS_GROUP_LIST, ['selfURI']),
    handle: async ({ ctx, list }) => {
      const found = await listAllAccessGroups(ctx, list);
      return page(found.items.map(presentAccessGroup), found.total);
    },
  }),
  route({
    method: 'POST',
    path: '/me/projects/:projectId/share',
    summary: 'Share a project with a user (email) or an access group (accessGroupId)',
    tags: TAGS,
    answers: { 200: ApiSharedResource },
    input: ShareInput,
    handle: async ({ ctx, user, params, input, present }) => {
      return ok(presentSharedResource(await shareProject(ctx, user, params.projectId, input), present));
    },
  }),
  route({
    method: 'DELETE',
    path: '/me/projects/:projectId/share',
    summary: 'Stop sharing a project with a user (email) or an access group (accessGroupId)',
    tags: TAGS,
    answers: { 204: 'empty' },
    input: ShareInput,
    handle: async ({ ctx, user, params, input }) => {
      await unshareProject(ctx, user, params.projectId, input);
      return noContent();
    },
  }),
  ...['/me/device-groups/:groupId', '/device-groups/:groupId'].flatMap((group) => [
    route({
      method: 'POST',
      path: `${group as '/me/device-groups/:groupId'}/share`,
      summary: 'Share a device group with a user (email) or an access group (accessGroupId)',
      tags: TAGS,
      answers: { 200: ApiSharedResource },
      input: ShareInput,
      handle: async ({ ctx, user, params, input, present }) => {
        return ok(presentSharedResource(await shareDeviceGroup(ctx, user, params.groupId, input), present));
      },
    }),
    route({
      method: 'DELETE',
      path: `${group as '/me/device-groups/:groupId'}/share`,
      summary: 'Stop sharing a device group with a user (email) or an access group (accessGroupId)',
      tags: TAGS,
      answers: { 204: 'empty' },
      input: ShareInput,
      handle: async ({ ctx, user, params, input }) => {
        await unshareDeviceGroup(ctx, user, params.groupId, input);
        return noContent();
      },
    }),
  ]),
];
