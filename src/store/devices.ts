/** Devices, device groups and group membership. */
import { type Kysely, type Selectable, sql } from 'kysely';
import {
  DEVICE_MACHINE,
  type Device,
  type DeviceEvent,
  type DeviceGroup,
  type DeviceOsType,
  type DeviceState,
} from '../domain/devices.ts';
import type { ExecutionKind } from '../domain/frameworks-kinds.ts';
import { type DeviceGroupOrigin, type FormFactor, groupOrigin } from '../domain/labels.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { DEVICE_GROUP_LIST, DEVICE_LIST } from '../domain/devices.ts';
import type { Dialect } from './db.ts';
import { addedSql, carriesSql, selectedSql, syncDeviceLabels } from './labels.ts';
import type { DevicesTable, Tables } from './schema.ts';
import { type ListSql, flag, inIds, listConditions, pageOf } from './sql.ts';
import { sharedWith } from './sharing.ts';

type DeviceField = keyof (typeof DEVICE_LIST)['fields'];
type GroupField = keyof (typeof DEVICE_GROUP_LIST)['fields'];

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
    creditsPrice: 'credits_price',
    stateReason: 'state_reason',
  },
  searchColumns: ['display_name', 'manufacturer'],
  tieBreaker: 'id',
};

const GROUP_SQL: ListSql<GroupField> = {
  columns: {
    id: 'g.id',
    displayName: 'g.display_name',
    osType: 'g.os_type',
    createTime: 'g.create_time',
    name: 'g.display_name',
    userId: 'g.user_id',
  },
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
  readonly serial?: string;
  readonly executionKinds?: readonly ExecutionKind[];
  /** When the host knows it; labels guess it from the name otherwise (domain/labels.ts#formFactorOf). */
  readonly formFactor?: FormFactor | undefined;
}

/** A device of a group, and how it is in it: added by hand, taken by the group's selectors, or both. */
export interface GroupMember {
  readonly device: Device;
  readonly origin: DeviceGroupOrigin;
}

export type DevicesStore = ReturnType<typeof devicesStore>;

export function devicesStore(db: Kysely<Tables>, dialect: Dialect) {
  const groupColumns = [
    'g.id',
    'g.user_id',
    'g.display_name',
    'g.os_type',
    'g.shared',
    // Added devices, plus those the selectors take besides: a group without selectors costs what it always did.
    sql<number>`((SELECT COUNT(*) FROM device_group_devices m WHERE m.group_id = g.id) + CASE
      WHEN EXISTS (SELECT 1 FROM device_group_selectors s WHERE s.group_id = g.id)
      THEN (SELECT COUNT(*) FROM devices d WHERE ${selectedSql('g', 'd')} AND NOT ${addedSql('g', 'd')})
      ELSE 0 END)`.as('device_count'),
    // The owner's, for `userEmail` when the group is read by whom it is shared with (docs/api.md#sharing).
    sql<string | null>`(SELECT u.email FROM users u WHERE u.id = g.user_id)`.as('owner_email'),
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
    async insert(device: NewDevice, now: number): Promise<Device> {
      const row = await db
        .insertInto('devices')
        .values({
          ...describedBy(device),
          credits_price: device.creditsPrice ?? 0,
          enabled: 1,
          online: 0,
          state: 'IDLE',
          create_time: now,
          serial: device.serial ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await syncDeviceLabels(db, row.id, device);
      return toDevice(row);
    },

    async findById(id: number): Promise<Device | undefined> {
      const row = await db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDevice(row);
    },

    async byIds(ids: readonly number[]): Promise<Map<number, Device>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('devices')
        .selectAll()
        .where(inIds(dialect, 'id', [...new Set(ids)]))
        .execute();
      return new Map(rows.map((row) => [row.id, toDevice(row)]));
    },

    /** `labelIds`: only devices carrying, for each label group among them, one of those labels. */
    async list(
      query: ListQuery<DeviceField>,
      labelIds: readonly number[] = [],
    ): Promise<{ total: number; items: Device[] }> {
      const base = db
        .selectFrom('devices')
        .where((eb) => eb.and(listConditions(dialect, query, DEVICE_SQL)))
        .$if(labelIds.length > 0, (q) => q.where(carriesSql(dialect, 'devices', labelIds)));
      const { total, rows } = await pageOf(base, (q) => q.selectAll(), query, DEVICE_SQL);
      return { total, items: rows.map(toDevice) };
    },

    /**
     * Moves a device by `event` if its state is one the event starts from (DEVICE_MACHINE); answers
     * whether it moved. `reason` says why it is in its new state; `resetStreak` ends its streak of
     * infrastructure failures. Claims and cleaning have writers of their own (queue.ts,
     * toIdleAfterCleaning), with conditions beyond the state, from the same table.
     */
    async transition(
      id: number,
      event: Exclude<DeviceEvent, 'claim' | 'unclaim' | 'stranded' | 'cleaned'>,
      options: { reason?: string; resetStreak?: boolean } = {},
    ): Promise<boolean> {
      const result = await db
        .updateTable('devices')
        .set({
          state: DEVICE_MACHINE.target(event),
          state_reason: options.reason ?? null,
          ...(options.resetStreak === true && { infra_failure_streak: 0 }),
        })
        .where('id', '=', id)
        .where('state', 'in', DEVICE_MACHINE.from(event))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async setOnline(id: number, online: boolean): Promise<void> {
      await db
        .updateTable('devices')
        .set({ online: flag(online) })
        .where('id', '=', id)
        .execute();
    },

    async setEnabled(id: number, enabled: boolean): Promise<void> {
      await db
        .updateTable('devices')
        .set({ enabled: flag(enabled) })
        .where('id', '=', id)
        .execute();
    },

    /** Registers or refreshes a device an agent reports; the serial identifies it across agents. */
    async upsertFromAgent(agentId: number, device: NewDevice & { serial: string }, now: number): Promise<Device> {
      const values = {
        ...describedBy(device),
        agent_id: agentId,
        online: 1,
        last_seen_time: now,
      };
      const existing = await db
        .selectFrom('devices')
        .select('id')
        .where('serial', '=', device.serial)
        .executeTakeFirst();
      if (existing) {
        await db.updateTable('devices').set(values).where('id', '=', existing.id).execute();
      } else {
        await db
          .insertInto('devices')
          .values({
            ...values,
            serial: device.serial,
            credits_price: device.creditsPrice ?? 0,
            enabled: 1,
            state: 'CLEANING',
            create_time: now,
          })
          .execute();
      }
      const row = await db
        .selectFrom('devices')
        .selectAll()
        .where('serial', '=', device.serial)
        .executeTakeFirstOrThrow();
      // What the host reports now decides the labels: an upgraded device moves between groups.
      await syncDeviceLabels(db, row.id, device);
      return toDevice(row);
    },

    async ofAgent(agentId: number): Promise<Device[]> {
      return (await db.selectFrom('devices').selectAll().where('agent_id', '=', agentId).orderBy('id').execute()).map(
        toDevice,
      );
    },

    /** Marks the agent's devices online (heartbeat) or offline (agent lost). */
    async setAgentOnline(agentId: number, online: boolean, now: number): Promise<void> {
      await db
        .updateTable('devices')
        .set({ online: flag(online), ...(online && { last_seen_time: now }) })
        .where('agent_id', '=', agentId)
        .execute();
    },

    /** A clean device of this agent takes work again, unless it was taken out of service; the state it is in now. */
    async toIdleAfterCleaning(id: number, agentId: number): Promise<DeviceState | undefined> {
      const updated = await db
        .updateTable('devices')
        .set({ state: DEVICE_MACHINE.target('cleaned'), state_reason: null })
        .where('id', '=', id)
        .where('agent_id', '=', agentId)
        .where('state', 'in', DEVICE_MACHINE.from('cleaned'))
        .returning('state')
        .executeTakeFirst();
      if (updated !== undefined) return updated.state as DeviceState;
      const device = await db
        .selectFrom('devices')
        .select(['state', 'agent_id'])
        .where('id', '=', id)
        .executeTakeFirst();
      return device?.agent_id === agentId ? (device.state as DeviceState) : undefined;
    },

    /** The agent's devices waiting to be cleaned. */
    async cleaningOf(agentId: number): Promise<number[]> {
      const rows = await db
        .selectFrom('devices')
        .select('id')
        .where('agent_id', '=', agentId)
        .where('state', '=', 'CLEANING')
        .execute();
      return rows.map((row) => row.id);
    },

    /** One more infrastructure failure in a row on the device; the streak now. */
    async recordInfraFailure(id: number): Promise<number> {
      const row = await db
        .updateTable('devices')
        .set((eb) => ({ infra_failure_streak: eb('infra_failure_streak', '+', 1) }))
        .where('id', '=', id)
        .returning('infra_failure_streak')
        .executeTakeFirstOrThrow();
      return row.infra_failure_streak;
    },

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
      const base = db
        .selectFrom('device_groups as g')
        .where((eb) =>
          eb.or([
            eb('g.user_id', '=', userId),
            eb('g.id', 'in', sharedWith(db, 'device_group_id', userId)),
            ...(withPublic ? [eb('g.user_id', 'is', null)] : []),
          ]),
        )
        .where((eb) => eb.and(listConditions(dialect, query, GROUP_SQL)));
      const { total, rows } = await pageOf(base, (q) => q.select(groupColumns), query, GROUP_SQL);
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
    serial: row.serial,
    agentId: row.agent_id,
    executionKinds: row.execution_kinds === '' ? [] : (row.execution_kinds.split(',') as ExecutionKind[]),
    stateReason: row.state_reason,
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

/** The columns that describe a device (what its agent reports about it). */
function describedBy(device: NewDevice) {
  return {
    display_name: device.displayName,
    manufacturer: device.manufacturer,
    os_type: device.osType,
    platform: device.platform,
    release_version: device.releaseVersion,
    api_level: device.apiLevel,
    execution_kinds: (device.executionKinds ?? []).join(','),
  };
}
