/**
 * Operators' routes (role ADMIN; the auth plugin answers 403 to everyone else): accounts and plans,
 * agents and their devices, taking a device out of service. Not part of the established API, so
 * kept out of its route table; they answer under /api/admin and /api/v2/admin like the rest.
 */
import Type from 'typebox';
import {
  createAccount,
  listAccounts,
  listAgents,
  requireAccount,
  returnDeviceToService,
  setDeviceEnabled,
  updateAccount,
} from '../../services/admin.ts';
import { getDevice } from '../../services/devices.ts';
import { ApiAgent, presentAgent } from '../present/agent.ts';
import { ApiManagedDevice, presentManagedDevice } from '../present/device.ts';
import { itemList, listSchema } from '../present/list.ts';
import { ApiManagedUser, presentManagedUser } from '../present/user.ts';
import { type RouteSpec, created, ok, route, whole } from '../route.ts';
import { Scalar, Text } from '../schemas.ts';
import type { Context } from '../../services/context.ts';
import { parseQuotaInput, setStorageQuota, storageOfAccounts, storageOfUser } from '../../services/storage.ts';
import type { User } from '../../domain/users.ts';

/** An account as operators see it, with its storage used and quota. */
const managed = async (ctx: Context, user: User) => presentManagedUser(user, await storageOfUser(ctx.store, user));

const TAGS = ['Operators'];
const ManagedUserList = listSchema(ApiManagedUser);
const AgentList = listSchema(ApiAgent);

export const adminRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/admin/users',
    summary: 'List every account with its plan, role and status (operators)',
    tags: TAGS,
    answers: { 200: ManagedUserList },
    access: 'admin',
    list: itemList(ApiManagedUser, { entity: 'users', sort: [], search: ['email', 'name'] }),
    handle: async ({ ctx }) => {
      const users = await listAccounts(ctx);
      const storage = await storageOfAccounts(ctx, users);
      return whole(users.map((user) => presentManagedUser(user, storage.get(user.id)!)));
    },
  }),
  route({
    method: 'POST',
    path: '/admin/users',
    summary: 'Create an account (operators)',
    tags: TAGS,
    answers: { 201: ApiManagedUser },
    access: 'admin',
    input: Type.Object({
      email: Text('E-mail address, used to sign in', 254),
      password: Text('Password, at least 8 characters', 1024),
      plan: Type.Optional(Text('PLATINUM, GOLD or SILVER (default SILVER)', 20)),
      role: Type.Optional(Text('USER or ADMIN (default USER)', 20)),
      firstName: Type.Optional(Text('First name', 255)),
      lastName: Type.Optional(Text('Last name', 255)),
    }),
    handle: async ({ ctx, input }) => created(await managed(ctx, await createAccount(ctx, input))),
  }),
  route({
    method: 'GET',
    path: '/admin/users/:accountId',
    summary: 'Read an account (operators)',
    tags: TAGS,
    answers: { 200: ApiManagedUser },
    access: 'admin',
    handle: async ({ ctx, params }) => ok(await managed(ctx, await requireAccount(ctx, params.accountId))),
  }),
  route({
    method: 'POST',
    path: '/admin/users/:accountId',
    summary: "Change an account's plan, role, status (enabled=false signs it out everywhere) or storage quota",
    tags: TAGS,
    answers: { 200: ApiManagedUser },
    access: 'admin',
    input: Type.Object({
      plan: Type.Optional(Text('PLATINUM, GOLD or SILVER', 20)),
      role: Type.Optional(Text('USER or ADMIN', 20)),
      enabled: Type.Optional(
        Type.Boolean({ description: 'false disables the account: its key, tokens and sessions stop working' }),
      ),
      storageQuotaBytes: Type.Optional(
        Scalar("Storage quota in bytes, overriding the plan's; 'default' (or null) for the plan's default"),
      ),
    }),
    handle: async ({ ctx, user, params, input }) => {
      // Checked before anything changes, so that a bad quota leaves the other changes undone too.
      const quota = input.storageQuotaBytes === undefined ? undefined : parseQuotaInput(input.storageQuotaBytes);
      const account = await updateAccount(ctx, user, params.accountId, input);
      if (quota !== undefined) await setStorageQuota(ctx, account, quota);
      return ok(await managed(ctx, account));
    },
  }),
  route({
    method: 'GET',
    path: '/admin/agents',
    summary: 'List the agents (device hosts) with their devices (operators)',
    tags: TAGS,
    answers: { 200: AgentList },
    access: 'admin',
    list: itemList(ApiAgent, { entity: 'agents', sort: [], search: ['name'] }),
    handle: async ({ ctx }) => whole((await listAgents(ctx)).map(({ agent, devices }) => presentAgent(agent, devices))),
  }),
  route({
    method: 'GET',
    path: '/admin/devices/:deviceId',
    summary: 'Read a device with its host details (operators)',
    tags: TAGS,
    answers: { 200: ApiManagedDevice },
    access: 'admin',
    handle: async ({ ctx, params }) => ok(presentManagedDevice(await getDevice(ctx, params.deviceId))),
  }),
  route({
    method: 'POST',
    path: '/admin/devices/:deviceId',
    summary: 'Take a device out of service (enabled=false) or put it back (enabled=true) (operators)',
    tags: TAGS,
    answers: { 200: ApiManagedDevice },
    access: 'admin',
    input: Type.Object({ enabled: Type.Boolean({ description: 'false: the device takes no new device runs' }) }),
    handle: async ({ ctx, params, input }) =>
      ok(presentManagedDevice(await setDeviceEnabled(ctx, params.deviceId, input.enabled))),
  }),
  route({
    method: 'POST',
    path: '/admin/devices/:deviceId/return-to-service',
    summary: 'Have a NOT_OPERATIONAL device cleaned again by its agent; it takes work once clean (operators)',
    tags: TAGS,
    answers: { 200: ApiManagedDevice },
    access: 'admin',
    input: Type.Object({}),
    handle: async ({ ctx, params }) => ok(presentManagedDevice(await returnDeviceToService(ctx, params.deviceId))),
  }),
];
