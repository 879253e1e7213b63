/** The caller's own account: `/me` (= `/users/{myId}`), profile updates, API key reset, password change. */
import Type from 'typebox';
import { presentUser } from '../present/user.ts';
import { type RouteSpec, noContent, ok, route } from '../route.ts';
import { NoInput, Text } from '../schemas.ts';
import type { Context } from '../../services/context.ts';
import { storageOfUser } from '../../services/storage.ts';
import { changePassword, resetApiKey, updateProfile } from '../../services/users.ts';
import type { User } from '../../domain/users.ts';

/** The account as its owner sees it, with its storage used and quota. */
const me = async (ctx: Context, user: User) => presentUser(user, await storageOfUser(ctx.store, user));

const TAGS = ['Account'];

export const userRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me',
    summary: 'The authenticated user',
    tags: TAGS,
    handle: async ({ ctx, user }) => ok(await me(ctx, user)),
  }),
  route({
    method: 'POST',
    path: '/me',
    summary: 'Update the profile',
    tags: TAGS,
    input: Type.Object({
      firstName: Type.Optional(Text('First name', 255)),
      lastName: Type.Optional(Text('Last name', 255)),
      organization: Type.Optional(Text('Organization', 255)),
      country: Type.Optional(Text('Country', 255)),
      timeZone: Type.Optional(Text('Time zone', 255)),
    }),
    handle: async ({ ctx, user, input }) => ok(await me(ctx, await updateProfile(ctx, user, input))),
  }),
  route({
    method: 'POST',
    path: '/me/reset-api-key',
    summary: 'Issue a new API key; the old key stops working at once',
    tags: TAGS,
    input: NoInput,
    handle: async ({ ctx, user }) => ok(await me(ctx, await resetApiKey(ctx, user))),
  }),
  route({
    method: 'POST',
    path: '/me/password',
    summary: 'Change the password (the current one is required); every OAuth token of the user stops working',
    tags: TAGS,
    input: Type.Object({
      currentPassword: Text('The current password', 1024),
      newPassword: Text('The new password', 1024),
    }),
    handle: async ({ ctx, user, input }) => {
      await changePassword(ctx, user, input.currentPassword, input.newPassword);
      return noContent();
    },
  }),
];
