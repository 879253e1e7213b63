/** Devices: what their hosts report, their states, and the agents that hold them. Groups: device-groups.ts. */
import type { Kysely, Selectable } from 'kysely';
import {
  DEVICE_CONSTANT_FIELDS,
  DEVICE_MACHINE,
  type DeviceConstantField,
  type Device,
  type DeviceEvent,
  type DeviceOsType,
  type DeviceState,
} from '../domain/devices.ts';
import type { ExecutionKind } from '../domain/frameworks-kinds.ts';
import type { FormFactor } from '../domain/labels.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { DEVICE_LIST } from '../domain/devices.ts';
import type { Dialect } from './db.ts';
import { carriesSql, syncDeviceLabels } from './labels.ts';
import type { DevicesTable, Tables } from './schema.ts';
import { type ListSql, flag, inIds, listConditions, pageOf } from './sql.ts';

/** How stale a device's last-seen time may grow while its host heartbeats: nothing reads it finer. */
const DEVICE_SEEN_RESOLUTION_MS = 60_000;
import { deviceGroupQueries } from './device-groups.ts';

type DeviceField = keyof (typeof DEVICE_LIST)['fields'];

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
    // As the presenter shows them (domain/devices.ts lockReason): a device is locked when it
    // cannot take a run now, available when it can and is enabled.
    locked: "(CASE WHEN state <> 'IDLE' OR online = 0 THEN 1 ELSE 0 END)",
    lockReason: "(CASE WHEN state = 'IDLE' THEN NULL ELSE state END)",
    available: "(CASE WHEN enabled = 1 AND online = 1 AND state = 'IDLE' THEN 1 ELSE 0 END)",
    ...constantColumns(),
  },
  searchColumns: ['display_name', 'manufacturer'],
  tieBreaker: 'id',
};

/** The fields every device shows as null (DEVICE_CONSTANT_FIELDS), as typed nulls. */
function constantColumns(): Record<DeviceConstantField, string> {
  const columns = {} as Record<DeviceConstantField, string>;
  for (const [field, spec] of Object.entries(DEVICE_CONSTANT_FIELDS))
    columns[field as DeviceConstantField] = `CAST(NULL AS ${spec.type === 'number' ? 'INTEGER' : 'TEXT'})`;
  return columns;
}

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

export type DevicesStore = ReturnType<typeof devicesStore>;

export function devicesStore(db: Kysely<Tables>, dialect: Dialect) {
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
      let query = db
        .updateTable('devices')
        .set({ online: flag(online), ...(online && { last_seen_time: now }) })
        .where('agent_id', '=', agentId);
      // A heartbeat rewrote every device row of its host each time, and claims of the same devices
      // waited on those row locks: now only rows that change, or whose time is over a minute old.
      if (online)
        query = query.where((eb) =>
          eb.or([
            eb('online', '=', 0),
            eb('last_seen_time', 'is', null),
            eb('last_seen_time', '<', now - DEVICE_SEEN_RESOLUTION_MS),
          ]),
        );
      else query = query.where('online', '=', 1);
      await query.execute();
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

    ...deviceGroupQueries(db, dialect),
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
