/** Devices (public to everyone) and device groups (the user's own, plus the service's public ones). */
import {
  type DEVICE_GROUP_LIST,
  type DEVICE_LIST,
  DEVICE_OS_TYPES,
  type Device,
  type DeviceGroup,
} from '../domain/devices.ts';
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import type { ListQuery } from '../domain/list-query.ts';
import { checkEnum, checkText } from '../domain/text.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import type { Page } from './views.ts';

type DeviceField = keyof (typeof DEVICE_LIST)['fields'];
type GroupField = keyof (typeof DEVICE_GROUP_LIST)['fields'];

/** `labelIds` (checked to exist by the caller) keeps the devices carrying them (docs/api.md#device-selection). */
export function listDevices(
  ctx: Context,
  query: ListQuery<DeviceField>,
  labelIds: readonly number[] = [],
): Promise<Page<Device>> {
  return ctx.store.devices.list(query, labelIds);
}

export async function getDevice(ctx: Context, id: number): Promise<Device> {
  const device = await ctx.store.devices.findById(id);
  if (device === undefined) throw new NotFoundError('Device', id);
  return device;
}

export function listGroups(
  ctx: Context,
  user: User,
  withPublic: boolean,
  query: ListQuery<GroupField>,
): Promise<Page<DeviceGroup>> {
  return ctx.store.devices.listGroups(user.id, withPublic, query);
}

export async function createGroup(
  ctx: Context,
  user: User,
  input: { displayName?: string; osType?: string },
): Promise<DeviceGroup> {
  const displayName = checkText('displayName', input.displayName ?? '', { maxLength: 255, required: true });
  if (input.osType === undefined)
    throw new InvalidParameterError('osType', `Parameter 'osType' is required: ${DEVICE_OS_TYPES.join(' or ')}`);
  const osType = checkEnum('osType', input.osType, DEVICE_OS_TYPES);
  return ctx.store.devices.insertGroup(user.id, displayName, osType, ctx.clock());
}

/** A group the user can see and use (own or public). */
export async function getGroup(ctx: Context, user: User, id: number): Promise<DeviceGroup> {
  const group = await ctx.store.devices.findUsableGroup(user.id, id);
  if (group === undefined) throw new NotFoundError('Device group', id);
  return group;
}

/** A group the user may change: public groups are visible but not theirs to edit (404 like any foreign id). */
export async function requireOwnedGroup(ctx: Context, user: User, id: number): Promise<DeviceGroup> {
  const group = await ctx.store.devices.findOwnedGroup(user.id, id);
  if (group === undefined) throw new NotFoundError('Device group', id);
  return group;
}

export async function renameGroup(
  ctx: Context,
  user: User,
  id: number,
  input: { displayName?: string },
): Promise<DeviceGroup> {
  const group = await requireOwnedGroup(ctx, user, id);
  if (input.displayName !== undefined) {
    await ctx.store.devices.renameGroup(
      group.id,
      checkText('displayName', input.displayName, { maxLength: 255, required: true }),
    );
  }
  return getGroup(ctx, user, id);
}

export async function deleteGroup(ctx: Context, user: User, id: number): Promise<void> {
  const group = await requireOwnedGroup(ctx, user, id);
  await ctx.store.devices.deleteGroup(group.id);
}

export async function addGroupDevices(
  ctx: Context,
  user: User,
  id: number,
  deviceIds: readonly number[],
): Promise<DeviceGroup> {
  if (deviceIds.length === 0)
    throw new InvalidParameterError('deviceId', `Parameter 'deviceId' or 'deviceIds[]' is required`);
  const group = await requireOwnedGroup(ctx, user, id);
  const devices = await ctx.store.devices.byIds(deviceIds);
  for (const deviceId of deviceIds) {
    const device = devices.get(deviceId);
    if (device === undefined) throw new NotFoundError('Device', deviceId);
    if (device.osType !== group.osType) {
      throw new InvalidParameterError(
        'deviceIds',
        `Device ${deviceId} (${device.osType}) cannot join the ${group.osType} group '${group.displayName}'`,
      );
    }
  }
  await ctx.store.devices.addToGroup(group.id, deviceIds);
  return getGroup(ctx, user, id);
}

export async function removeGroupDevice(ctx: Context, user: User, id: number, deviceId: number): Promise<void> {
  const group = await requireOwnedGroup(ctx, user, id);
  if (await ctx.store.devices.removeFromGroup(group.id, deviceId)) return;
  // Not added by hand, it may still be in the group by its labels (docs/api.md#device-selection).
  const selected = (await ctx.store.devices.membersOfGroup(group.id)).some((member) => member.device.id === deviceId);
  if (!selected) throw new NotFoundError('Device', deviceId);
  throw new InvalidParameterError(
    'deviceId',
    `Device ${deviceId} is in '${group.displayName}' by the group's selectors, not added to it: ` +
      `remove the selector that takes it (…/selectors/{labelId})`,
  );
}
