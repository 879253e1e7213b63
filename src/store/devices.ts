/** Devices, device groups and group membership. */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Device, DeviceGroup, DeviceOsType, DeviceState } from '../domain/devices.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { Dialect } from './db.ts';
import type { DevicesTable, Tables } from './schema.ts';
import { type ListSql, flag, inIds, listConditions, orderItems } from './sql.ts';

type DeviceField = 'id' | 'displayName' | 'manufacturer' | 'osType' | 'platform' | 'releaseVersion' | 'apiLevel' | 'online' | 'enabled' | 'state';
type GroupField = 'id' | 'displayName' | 'osType' | 'createTime';

const DEVICE_SQL: ListSql<DeviceField> = {
  columns: {
    id: 'id',
    displayName: 'display_name',
    manufacturer: 'manufacturer',
    osType: 'os_type',
    platform: 'platform',
    releaseVersion: 'release_version',
    apiLevel: 'api_level',
    online: 'online',
    enabled: 'enabled',
    state: 'state',
  },
  searchColumns: ['display_name', 'manufacturer'],
  tieBreaker: 'id',
};

const GROUP_SQL: ListSql<GroupField> = {
  columns: { id: 'g.id', displayName: 'g.display_name', osType: 'g.os_type', createTime: 'g.create_time' },
  searchColumns: ['g.display_name'],
  tieBreaker: 'g.id',
};

export interface NewDevice {
  readonly displayName: string;
  readonly manufacturer: string;
  readonly osType: DeviceOsType;
  readonly platform: string;
  readonly releaseVersion: string;
  readonly apiLevel: number | null;
  readonly creditsPrice?: number;
}

export type DevicesStore = ReturnType<typeof devicesStore>;

export function devicesStore(db: Kysely<Tables>, dialect: Dialect) {
  const groupColumns = [
    'g.id',
    'g.user_id',
    'g.display_name',
    'g.os_type',
    'g.shared',
    sql<number>`(SELECT COUNT(*) FROM device_group_devices m WHERE m.group_id = g.id)`.as('device_count'),
  ] as const;

  return {
    async insert(device: NewDevice, now: number): Promise<Device> {
      const row = await db
        .insertInto('devices')
        .values({
          display_name: device.displayName,
          manufacturer: device.manufacturer,
          os_type: device.osType,
          platform: device.platform,
          release_version: device.releaseVersion,
          api_level: device.apiLevel,
          credits_price: device.creditsPrice ?? 0,
          enabled: 1,
          online: 0,
          state: 'IDLE',
          create_time: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toDevice(row);
    },

    async findById(id: number): Promise<Device | undefined> {
      const row = await db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDevice(row);
    },

    async byIds(ids: readonly number[]): Promise<Map<number, Device>> {
      if (ids.length === 0) return new Map();
      const rows = await db.selectFrom('devices').selectAll().where(inIds(dialect, 'id', [...new Set(ids)])).execute();
      return new Map(rows.map((row) => [row.id, toDevice(row)]));
    },

    async list(query: ListQuery<DeviceField>): Promise<{ total: number; items: Device[] }> {
      const base = db.selectFrom('devices').where((eb) => eb.and(listConditions(dialect, query, DEVICE_SQL)));
      const counted = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      let page = base.selectAll();
      for (const item of orderItems(query.sort, DEVICE_SQL)) page = page.orderBy(item);
      if (query.limit > 0) page = page.limit(query.limit);
      if (query.offset > 0) page = page.offset(query.offset);
      return { total: Number(counted.total), items: (await page.execute()).map(toDevice) };
    },

    async setState(id: number, state: DeviceState): Promise<void> {
      await db.updateTable('devices').set({ state }).where('id', '=', id).execute();
    },

    async setOnline(id: number, online: boolean): Promise<void> {
      await db.updateTable('devices').set({ online: flag(online) }).where('id', '=', id).execute();
    },

    async insertGroup(userId: number | null, displayName: string, osType: DeviceOsType, now: number): Promise<DeviceGroup> {
      const row = await db
        .insertInto('device_groups')
        .values({ user_id: userId, display_name: displayName, os_type: osType, shared: 0, create_time: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { id: row.id, userId, displayName, osType, shared: false, deviceCount: 0 };
    },

    /** A group the user may use: their own, or one of the service's public groups. */
    async findUsableGroup(userId: number, id: number): Promise<DeviceGroup | undefined> {
      const row = await db
        .selectFrom('device_groups as g')
        .select(groupColumns)
        .where('g.id', '=', id)
        .where((eb) => eb.or([eb('g.user_id', '=', userId), eb('g.user_id', 'is', null)]))
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

    async groupNames(ids: readonly number[]): Promise<Map<number, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db.selectFrom('device_groups').select(['id', 'display_name']).where(inIds(dialect, 'id', ids)).execute();
      return new Map(rows.map((row) => [row.id, row.display_name]));
    },

    async listGroups(
      userId: number,
      withPublic: boolean,
      query: ListQuery<GroupField>,
    ): Promise<{ total: number; items: DeviceGroup[] }> {
      const base = db
        .selectFrom('device_groups as g')
        .where((eb) => (withPublic ? eb.or([eb('g.user_id', '=', userId), eb('g.user_id', 'is', null)]) : eb('g.user_id', '=', userId)))
        .where((eb) => eb.and(listConditions(dialect, query, GROUP_SQL)));
      const counted = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      let page = base.select(groupColumns);
      for (const item of orderItems(query.sort, GROUP_SQL)) page = page.orderBy(item);
      if (query.limit > 0) page = page.limit(query.limit);
      if (query.offset > 0) page = page.offset(query.offset);
      return { total: Number(counted.total), items: (await page.execute()).map(toGroup) };
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

    async devicesOfGroup(groupId: number): Promise<Device[]> {
      const rows = await db
        .selectFrom('devices')
        .selectAll('devices')
        .innerJoin('device_group_devices as m', 'm.device_id', 'devices.id')
        .where('m.group_id', '=', groupId)
        .orderBy('devices.id')
        .execute();
      return rows.map(toDevice);
    },
  };
}

export function toDevice(row: Selectable<DevicesTable>): Device {
  return {
    id: row.id,
    displayName: row.display_name,
    manufacturer: row.manufacturer,
    osType: row.os_type as DeviceOsType,
    platform: row.platform,
    releaseVersion: row.release_version,
    apiLevel: row.api_level,
    creditsPrice: row.credits_price,
    enabled: row.enabled === 1,
    online: row.online === 1,
    state: row.state as DeviceState,
  };
}

function toGroup(row: {
  id: number;
  user_id: number | null;
  display_name: string;
  os_type: string;
  shared: number;
  device_count: number;
}): DeviceGroup {
  return {
    id: row.id,
    userId: row.user_id,
    displayName: row.display_name,
    osType: row.os_type as DeviceOsType,
    shared: row.shared === 1,
    deviceCount: Number(row.device_count),
  };
}
