/**
 * Device groups and their membership (docs/api.md#device-selection): devices added by hand and
 * those the group's selectors take; merged into the devices store (store/devices.ts).
 */
import { type Kysely, sql } from 'kysely';
import type { DEVICE_GROUP_LIST, Device, DeviceGroup, DeviceOsType } from '../domain/devices.ts';
import { type DeviceGroupOrigin, groupOrigin } from '../domain/labels.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { Dialect } from './db.ts';
import { toDevice } from './devices.ts';
import { addedSql, selectedSql } from './labels.ts';
import type { Tables } from './schema.ts';
import { type ListSql, inIds, listConditions, pageOf } from './sql.ts';
import { sharedWith } from './sharing.ts';

type GroupField = keyof (typeof DEVICE_GROUP_LIST)['fields'];

/** Added devices, plus those the selectors take besides: a group without selectors costs what it always did. */
const DEVICE_COUNT = sql<number>`((SELECT COUNT(*) FROM device_group_devices m WHERE m.group_id = g.id) + CASE
      WHEN EXISTS (SELECT 1 FROM device_group_selectors s WHERE s.group_id = g.id)
      THEN (SELECT COUNT(*) FROM devices d WHERE ${selectedSql('g', 'd')} AND NOT ${addedSql('g', 'd')})
      ELSE 0 END)`;
const OWNER_EMAIL = '(SELECT u.email FROM users u WHERE u.id = g.user_id)';

/** The listing's fields as SQL, seen from the caller: whether a group is shared depends on who asks. */
function groupSql(userId: number): ListSql<GroupField> {
  return {
    columns: {
      id: 'g.id',
      displayName: 'g.display_name',
      osType: 'g.os_type',
      createTime: 'g.create_time',
      name: 'g.display_name',
      userId: 'g.user_id',
      deviceCount: DEVICE_COUNT,
      userEmail: OWNER_EMAIL,
      shared: sql`(CASE WHEN g.shared = 1 OR (g.user_id IS NOT NULL AND g.user_id <> ${userId}) THEN 1 ELSE 0 END)`,
      isPublic: '(CASE WHEN g.user_id IS NULL THEN 1 ELSE 0 END)',
      // Nothing is billed here (a bare 0 would be a column position in ORDER BY).
      creditsPrice: 'CAST(0 AS INTEGER)',
    },
    searchColumns: ['g.display_name'],
    tieBreaker: 'g.id',
  };
}

/** A device of a group, and how it is in it: added by hand, taken by the group's selectors, or both. */
export interface GroupMember {
  readonly device: Device;
  readonly origin: DeviceGroupOrigin;
}

export function deviceGroupQueries(db: Kysely<Tables>, dialect: Dialect) {
  const groupColumns = [
    'g.id',
    'g.user_id',
    'g.display_name',
    'g.os_type',
    'g.shared',
    DEVICE_COUNT.as('device_count'),
    // The owner's, for `userEmail` when the group is read by whom it is shared with (docs/api.md#sharing).
    sql<string | null>`${sql.raw(OWNER_EMAIL)}`.as('owner_email'),
  ] as const;

  /**
   * The devices of a group with how each is in it (docs/api.md#device-selection): those added to it
   * by their join, then, when it has selectors, those they take. Sorted by id.
   */
  async function membersOfGroup(groupId: number): Promise<GroupMember[]> {
    const added = await db
      .selectFrom('devices as d')
      .innerJoin('device_group_devices as m', 'm.device_id', 'd.id')
      .selectAll('d')
      .where('m.group_id', '=', groupId)
      .execute();
    const hasSelectors = await db
      .selectFrom('device_group_selectors')
      .select('label_id')
      .where('group_id', '=', groupId)
      .limit(1)
      .executeTakeFirst();
    const selected =
      hasSelectors === undefined
        ? []
        : await db
            .selectFrom(['devices as d', 'device_groups as g'])
            .selectAll('d')
            .where('g.id', '=', groupId)
            .where(selectedSql('g', 'd'))
            .execute();
    const addedIds = new Set(added.map((row) => row.id));
    const selectedIds = new Set(selected.map((row) => row.id));
    const rows = new Map([...added, ...selected].map((row) => [row.id, row]));
    return [...rows.values()]
      .sort((a, b) => a.id - b.id)
      .map((row) => ({
        device: toDevice(row),
        origin: groupOrigin(addedIds.has(row.id), selectedIds.has(row.id))!,
      }));
  }

  return {
    async insertGroup(
      userId: number | null,
      displayName: string,
      osType: DeviceOsType,
      now: number,
    ): Promise<DeviceGroup> {
      const row = await db
        .insertInto('device_groups')
        .values({ user_id: userId, display_name: displayName, os_type: osType, shared: 0, create_time: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      const created = await db
        .selectFrom('device_groups as g')
        .select(groupColumns)
        .where('g.id', '=', row.id)
        .executeTakeFirstOrThrow();
      return toGroup(created);
    },

    /** A group the user may use: theirs, public, or shared with them (docs/api.md#sharing). */
    async findUsableGroup(userId: number, id: number): Promise<DeviceGroup | undefined> {
      const row = await db
        .selectFrom('device_groups as g')
        .select(groupColumns)
        .where('g.id', '=', id)
        .where((eb) =>
          eb.or([
            eb('g.user_id', '=', userId),
            eb('g.user_id', 'is', null),
            eb('g.id', 'in', sharedWith(db, 'device_group_id', userId)),
          ]),
        )
        .executeTakeFirst();
      return row && toGroup(row);
    },

    async findPublicGroup(displayName: string, osType: DeviceOsType): Promise<DeviceGroup | undefined> {
      const row = await db
        .selectFrom('device_groups as g')
        .select(groupColumns)
        .where('g.user_id', 'is', null)
        .where('g.display_name', '=', displayName)
        .where('g.os_type', '=', osType)
        .orderBy('g.id')
        .limit(1)
        .executeTakeFirst();
      return row && toGroup(row);
    },

    /** A group the user owns (and so may change). */
    async findOwnedGroup(userId: number, id: number): Promise<DeviceGroup | undefined> {
      const row = await db
        .selectFrom('device_groups as g')
        .select(groupColumns)
        .where('g.id', '=', id)
        .where('g.user_id', '=', userId)
        .executeTakeFirst();
      return row && toGroup(row);
    },

    /** The group a run uses when none is named: the user's oldest of that OS, else a public one. */
    async defaultGroup(userId: number, osType: DeviceOsType): Promise<DeviceGroup | undefined> {
      const row = await db
        .selectFrom('device_groups as g')
        .select(groupColumns)
        .where('g.os_type', '=', osType)
        .where((eb) => eb.or([eb('g.user_id', '=', userId), eb('g.user_id', 'is', null)]))
        .orderBy(sql`CASE WHEN g.user_id IS NULL THEN 1 ELSE 0 END`)
        .orderBy('g.id')
        .limit(1)
        .executeTakeFirst();
      return row && toGroup(row);
    },

    async groupNames(ids: readonly number[]): Promise<Map<number, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('device_groups')
        .select(['id', 'display_name'])
        .where(inIds(dialect, 'id', ids))
        .execute();
      return new Map(rows.map((row) => [row.id, row.display_name]));
    },

    async listGroups(
      userId: number,
      withPublic: boolean,
      query: ListQuery<GroupField>,
    ): Promise<{ total: number; items: DeviceGroup[] }> {
      const spec = groupSql(userId);
      const base = db
        .selectFrom('device_groups as g')
        .where((eb) =>
          eb.or([
            eb('g.user_id', '=', userId),
            eb('g.id', 'in', sharedWith(db, 'device_group_id', userId)),
            ...(withPublic ? [eb('g.user_id', 'is', null)] : []),
          ]),
        )
        .where((eb) => eb.and(listConditions(dialect, query, spec)));
      const { total, rows } = await pageOf(base, (q) => q.select(groupColumns), query, spec);
      return { total, items: rows.map(toGroup) };
    },

    async setGroupShared(id: number, shared: boolean): Promise<void> {
      await db
        .updateTable('device_groups')
        .set({ shared: shared ? 1 : 0 })
        .where('id', '=', id)
        .execute();
    },

    async renameGroup(id: number, displayName: string): Promise<void> {
      await db.updateTable('device_groups').set({ display_name: displayName }).where('id', '=', id).execute();
    },

    async deleteGroup(id: number): Promise<void> {
      await db.deleteFrom('device_groups').where('id', '=', id).execute();
    },

    async addToGroup(groupId: number, deviceIds: readonly number[]): Promise<void> {
      if (deviceIds.length === 0) return;
      await db
        .insertInto('device_group_devices')
        .values(deviceIds.map((deviceId) => ({ group_id: groupId, device_id: deviceId })))
        .onConflict((oc) => oc.columns(['group_id', 'device_id']).doNothing())
        .execute();
    },

    async removeFromGroup(groupId: number, deviceId: number): Promise<boolean> {
      const result = await db
        .deleteFrom('device_group_devices')
        .where('group_id', '=', groupId)
        .where('device_id', '=', deviceId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** The devices of a group now: those added to it and those its selectors take (docs/api.md#device-selection). */
    async devicesOfGroup(groupId: number): Promise<Device[]> {
      return (await membersOfGroup(groupId)).map((member) => member.device);
    },

    membersOfGroup,
  };
}

function toGroup(row: {
  id: number;
  user_id: number | null;
  display_name: string;
  os_type: string;
  shared: number;
  device_count: number;
  owner_email: string | null;
}): DeviceGroup {
  return {
    ownerEmail: row.owner_email,
    id: row.id,
    userId: row.user_id,
    displayName: row.display_name,
    osType: row.os_type as DeviceOsType,
    shared: row.shared === 1,
    deviceCount: Number(row.device_count),
  };
}
