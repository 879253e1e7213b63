/**
 * Label groups and labels (the fleet's, public like the device list), the device picker's filters,
 * and the selectors that make a device group follow the fleet (docs/api.md#device-selection).
 */
import type { DeviceGroup } from '../domain/devices.ts';
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import {
  type LABEL_GROUP_LIST,
  type LABEL_LIST,
  type Label,
  type LabelGroup,
  type LabelInUse,
  labelGroupById,
} from '../domain/labels.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { User } from '../domain/users.ts';
import type { GroupMember } from '../store/device-groups.ts';
import type { Context } from './context.ts';
import { getDevice, getGroup, requireOwnedGroup } from './devices.ts';
import type { Page } from './views.ts';

type LabelField = keyof (typeof LABEL_LIST)['fields'];
type GroupField = keyof (typeof LABEL_GROUP_LIST)['fields'];

export type { GroupMember };

/** How many labels one request may name (selectors, device list filters). */
const MAX_LABEL_IDS = 1000;

export function listLabelGroups(ctx: Context, query: ListQuery<GroupField>): Promise<Page<LabelGroup>> {
  return ctx.store.labels.listGroups(query);
}

export async function getLabelGroup(ctx: Context, id: number): Promise<LabelGroup> {
  const group = await ctx.store.labels.findGroup(id);
  if (group === undefined) throw new NotFoundError('Label group', id);
  return group;
}

export async function listLabels(ctx: Context, query: ListQuery<LabelField>, groupId?: number): Promise<Page<Label>> {
  if (groupId === undefined) return ctx.store.labels.list(query);
  const group = await getLabelGroup(ctx, groupId);
  return ctx.store.labels.list(query, { labelGroupId: group.id });
}

export async function getLabel(ctx: Context, groupId: number, id: number): Promise<Label> {
  const label = (await ctx.store.labels.byIds([id])).get(id);
  if (label === undefined || label.groupId !== groupId) throw new NotFoundError('Label', id);
  return label;
}

/** The labels a device carries (its `properties`). */
export async function deviceProperties(
  ctx: Context,
  deviceId: number,
  query: ListQuery<LabelField>,
): Promise<Page<Label>> {
  const device = await getDevice(ctx, deviceId);
  return ctx.store.labels.list(query, { deviceId: device.id });
}

/** The labels of each device, for records answered `withProperties=true`. */
export function propertiesOf(ctx: Context, deviceIds: readonly number[]): Promise<Map<number, Label[]>> {
  return ctx.store.labels.ofDevices(deviceIds);
}

export async function deviceFilters(ctx: Context): Promise<{ groups: LabelGroup[]; labels: LabelInUse[] }> {
  const all = { offset: 0, limit: 0, search: '', sort: [], filters: [], raw: { sort: '', filter: [] } } as const;
  const [groups, labels] = await Promise.all([
    ctx.store.labels.listGroups({ ...all, sort: [{ field: 'id', direction: 'asc' }] }),
    ctx.store.labels.inUse(),
  ]);
  return { groups: groups.items, labels };
}

/** The labels `ids` name, each checked to exist (400 naming `parameter` otherwise). */
export async function requireLabels(ctx: Context, parameter: string, ids: readonly number[]): Promise<Label[]> {
  if (ids.length > MAX_LABEL_IDS)
    throw new InvalidParameterError(parameter, `Parameter '${parameter}' names at most ${MAX_LABEL_IDS} labels`);
  const labels = await ctx.store.labels.byIds(ids);
  const unknown = ids.filter((id) => !labels.has(id));
  if (unknown.length > 0)
    throw new InvalidParameterError(
      parameter,
      `Parameter '${parameter}': no label with id ${unknown.join(', ')} (GET /labels lists them)`,
    );
  return ids.map((id) => labels.get(id)!);
}

/** A group's selectors: the labels it takes devices by. */
export async function groupSelectors(
  ctx: Context,
  user: User,
  groupId: number,
  query: ListQuery<LabelField>,
): Promise<Page<Label>> {
  const group = await getGroup(ctx, user, groupId);
  return ctx.store.labels.list(query, { selectorsOf: group.id });
}

export async function groupSelector(ctx: Context, user: User, groupId: number, labelId: number): Promise<Label> {
  const group = await getGroup(ctx, user, groupId);
  const selector = (await ctx.store.labels.selectorsOf(group.id)).find((label) => label.id === labelId);
  if (selector === undefined) throw new NotFoundError('Selector', labelId);
  return selector;
}

/**
 * Makes the group also take every device, now or later, that carries the labels (one of them per
 * label group). A label of another OS's group (an iOS version for an Android group) is a 400.
 */
export async function addSelectors(
  ctx: Context,
  user: User,
  groupId: number,
  labelIds: readonly number[],
): Promise<DeviceGroup> {
  const group = await requireOwnedGroup(ctx, user, groupId);
  if (labelIds.length === 0)
    throw new InvalidParameterError('selectorIds', `Parameter 'selectorIds[]' is required: the label ids to select by`);
  const labels = await requireLabels(ctx, 'selectorIds', labelIds);
  for (const label of labels) {
    const labelGroup = labelGroupById(label.groupId);
    if (labelGroup?.osType != null && labelGroup.osType !== group.osType)
      throw new InvalidParameterError(
        'selectorIds',
        `Parameter 'selectorIds': label ${label.id} (${labelGroup.displayName} ${label.displayName}) selects ` +
          `${labelGroup.osType} devices; '${group.displayName}' is a ${group.osType} group`,
      );
  }
  await ctx.store.labels.addSelectors(group.id, labelIds);
  return getGroup(ctx, user, group.id);
}

export async function removeSelector(ctx: Context, user: User, groupId: number, labelId: number): Promise<void> {
  const group = await requireOwnedGroup(ctx, user, groupId);
  if (!(await ctx.store.labels.removeSelector(group.id, labelId))) throw new NotFoundError('Selector', labelId);
}

/** A group's devices now, with how each is in it (`deviceGroupOrigin`). */
export async function groupMembers(ctx: Context, user: User, groupId: number): Promise<GroupMember[]> {
  const group = await getGroup(ctx, user, groupId);
  return ctx.store.devices.membersOfGroup(group.id);
}
