/** The caller's own account: `/me` (= `/users/{myId}`), profile updates, API key reset, password change. */
import Type from 'typebox';
import { ForbiddenError } from '../../domain/errors.ts';
import type { Credential } from '../plugins/auth.ts';
import { ApiMe, presentUser } from '../present/user.ts';
import { type RouteSpec, noContent, ok, route } from '../route.ts';
import { NoInput, Text } from '../schemas.ts';
import { changePassword, resetApiKey, updateProfile } from '../../services/users.ts';
import { requireRecentSignIn } from '../../services/web-sessions.ts';
import { storageOfUser } from '../../services/storage.ts';
import type { Context } from '../../services/context.ts';
import type { User } from '../../domain/users.ts';

const TAGS = ['Account'];

/** The API key is echoed to a caller that sent it; OAuth tokens and sessions do not get it. */
const keyShownTo = (credential: Credential | null) => (credential?.kind === 'apiKey' ? credential.key : undefined);

/** The account as its owner sees it, with its storage used and quota (and the key, when shown). */
const me = async (ctx: Context, user: User, apiKey?: string) =>
  presentUser(user, await storageOfUser(ctx.store, user), apiKey);

/** The session acting, whose own sign-in survives the change it makes. */
const actingSession = (credential: Credential | null) =>
  credential?.kind === 'session' ? credential.session.tokenHash : undefined;

export const userRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me',
    summary: 'The authenticated user (apiKey only when authenticated with the API key itself)',
    tags: TAGS,
    answers: { 200: ApiMe },
    handle: async ({ ctx, user, credential }) => ok(await me(ctx, user, keyShownTo(credential))),
  }),
  route({
    method: 'POST',
    path: '/me',
    summary: 'Update the profile (names, organization, country, time zone, address, city, code, state, phone, vatId)',
    tags: TAGS,
    answers: { 200: ApiMe },
    input: Type.Object({
      firstName: Type.Optional(Text('First name', 255)),
      lastName: Type.Optional(Text('Last name', 255)),
      organization: Type.Optional(Text('Organization', 255)),
      country: Type.Optional(Text('Country', 255)),
      timeZone: Type.Optional(Text('Time zone', 255)),
      address: Type.Optional(Text('Street address', 255)),
      city: Type.Optional(Text('City', 255)),
      code: Type.Optional(Text('Postal code', 255)),
      state: Type.Optional(Text('State or region', 255)),
      phone: Type.Optional(Text('Phone number', 255)),
      vatId: Type.Optional(Text('VAT id', 255)),
    }),
    handle: async ({ ctx, user, credential, input }) =>
      ok(await me(ctx, await updateProfile(ctx, user, input), keyShownTo(credential))),
  }),
  route({
    method: 'POST',
    path: '/me/reset-api-key',
    summary:
      'Issue a new API key; the old key, every OAuth token and every other dashboard session stop working at once. ' +
      'With the API key, or a dashboard session within 10 minutes of entering the password; not with an OAuth token',
    tags: TAGS,
    answers: { 200: ApiMe },
    input: NoInput,
    handle: async ({ ctx, user, credential }) => {
      // Its answer is a permanent credential: a short-lived one may not obtain it.
      if (credential?.kind === 'oauth') {
        throw new ForbiddenError(
          'An OAuth token cannot reset the API key: use the key itself, or the account page of the dashboard',
        );
      }
      if (credential?.kind === 'session') requireRecentSignIn(ctx, credential.session);
      const updated = await resetApiKey(ctx, user, actingSession(credential));
      return ok(await me(ctx, updated, updated.apiKey));
    },
  }),
  route({
    method: 'POST',
    path: '/me/password',
    summary:
      'Change the password (the current one is required); every OAuth token and every other dashboard session of the user stop working',
    tags: TAGS,
    answers: { 204: 'empty' },
    takesPassword: true,
    input: Type.Object({
      currentPassword: Text('The current password', 1024),
      newPassword: Text('The new password', 1024),
    }),
    handle: async ({ ctx, user, credential, input }) => {
      await changePassword(ctx, user, input.currentPassword, input.newPassword, actingSession(credential));
      return noContent();
    },
  }),
];
