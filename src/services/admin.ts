/**
 * What operators (role ADMIN) do through the API: manage accounts and plans, see the agents and
 * their devices, and take devices out of service and back. The CLI's `devicecloud admin` does the
 * account part against the store directly; both go through the same use cases in users.ts.
 */
import { DEVICE_LIST, type Device } from '../domain/devices.ts';
import { IllegalTransitionError, InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import { parseListQuery } from '../domain/list-query.ts';
import { checkEnum } from '../domain/text.ts';
import { PLANS, ROLES, type User } from '../domain/users.ts';
import type { Agent } from '../domain/agents.ts';
import type { Context } from './context.ts';
import { wake } from './run-lifecycle.ts';
import { createUser, setPlan, setRole } from './users.ts';

export function listAccounts(ctx: Context): Promise<User[]> {
  return ctx.store.users.list();
}

export interface NewAccountInput {
  readonly email: string;
  readonly password: string;
  readonly plan?: string;
  readonly role?: string;
  readonly firstName?: string;
  readonly lastName?: string;
}

export function createAccount(ctx: Context, input: NewAccountInput): Promise<User> {
  return createUser(ctx, {
    email: input.email,
    password: input.password,
    plan: input.plan === undefined ? 'SILVER' : checkEnum('plan', input.plan, PLANS),
    role: input.role === undefined ? 'USER' : checkEnum('role', input.role, ROLES),
    firstName: input.firstName,
    lastName: input.lastName,
  });
}

export interface AccountChanges {
  readonly plan?: string;
  readonly role?: string;
  readonly enabled?: boolean;
}

/**
 * Changes another account's plan, role or status. An operator cannot disable or demote themselves:
 * a cloud whose last operator did so could only be repaired with `devicecloud admin` on the host.
 */
export async function updateAccount(ctx: Context, operator: User, id: number, changes: AccountChanges): Promise<User> {
  let user = await requireAccount(ctx, id);
  const plan = changes.plan === undefined ? undefined : checkEnum('plan', changes.plan, PLANS);
  const role = changes.role === undefined ? undefined : checkEnum('role', changes.role, ROLES);
  if (user.id === operator.id && role !== undefined && role !== 'ADMIN') {
    throw new InvalidParameterError('role', 'You cannot take the ADMIN role from yourself; ask another operator');
  }
  if (user.id === operator.id && changes.enabled === false) {
    throw new InvalidParameterError('enabled', 'You cannot disable your own account; ask another operator');
  }
  if (plan !== undefined) user = await setPlan(ctx, user, plan);
  if (role !== undefined) user = await setRole(ctx, user, role);
  if (changes.enabled !== undefined) {
    const enabled = changes.enabled;
    await ctx.store.transaction(async (store) => {
      await store.users.setStatus(user.id, enabled ? 'ENABLED' : 'DISABLED');
      // Re-enabling must not bring back sign-ins from before: the user signs in afresh.
      if (!enabled) {
        await store.oauthTokens.revokeAllOf(user.id);
        await store.webSessions.revokeAllOf(user.id);
      }
    });
    user = await requireAccount(ctx, user.id);
  }
  return user;
}

export async function requireAccount(ctx: Context, id: number): Promise<User> {
  const user = await ctx.store.users.findById(id);
  if (user === undefined) throw new NotFoundError('User', id);
  return user;
}

export interface AgentWithDevices {
  readonly agent: Agent;
  readonly devices: readonly Device[];
}

/** Every agent with the devices it registered; two queries whatever the number of agents. */
export async function listAgents(ctx: Context): Promise<AgentWithDevices[]> {
  const [agents, devices] = await Promise.all([
    ctx.store.agents.list(),
    ctx.store.devices.list(parseListQuery({ limit: 0, sort: 'id_a' }, DEVICE_LIST)),
  ]);
  const byAgent = new Map<number, Device[]>();
  for (const device of devices.items) {
    if (device.agentId === null) continue;
    const list = byAgent.get(device.agentId) ?? [];
    list.push(device);
    byAgent.set(device.agentId, list);
  }
  return agents.map((agent) => ({ agent, devices: byAgent.get(agent.id) ?? [] }));
}

/**
 * Takes a device out of service (it takes no new device runs; new runs exclude it with reason
 * ADMIN, waiting ones say it is disabled) or puts it back. A device run it is running goes on.
 */
export async function setDeviceEnabled(ctx: Context, deviceId: number, enabled: boolean): Promise<Device> {
  const device = await ctx.store.devices.findById(deviceId);
  if (device === undefined) throw new NotFoundError('Device', deviceId);
  await ctx.store.devices.setEnabled(device.id, enabled);
  // Its agent may be waiting on a claim with this device free: it should look for work now.
  if (enabled && device.agentId !== null) wake(ctx, new Set([device.agentId]));
  return (await ctx.store.devices.findById(device.id))!;
}

/**
 * A device taken out of service (cleaning failed, or infrastructure failures in a row) goes back
 * to its agent to be cleaned again, told on its next heartbeat; it takes work once clean. Only for
 * NOT_OPERATIONAL devices: 409 otherwise.
 */
export async function returnDeviceToService(ctx: Context, deviceId: number): Promise<Device> {
  const device = await ctx.store.devices.findById(deviceId);
  if (device === undefined) throw new NotFoundError('Device', deviceId);
  if (
    !(await ctx.store.devices.transition(device.id, 'returnToService', {
      reason: 'returned to service by an operator: being cleaned again',
      resetStreak: true,
    }))
  ) {
    throw new IllegalTransitionError(
      'device',
      device.state,
      'returnToService',
      'CLEANING',
      `Device ${device.id} is ${device.state}, not NOT_OPERATIONAL: there is nothing to return it from`,
    );
  }
  return (await ctx.store.devices.findById(device.id))!;
}
