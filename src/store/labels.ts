/**
 * Label groups, labels, the labels devices carry and the labels device groups select by
 * (docs/api.md#device-selection). Which devices a group's selectors take is answered in SQL here,
 * so that lists, counts and run starts all see the fleet as it is now.
 */
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import {
  type DeviceFacts,
  type LABEL_GROUP_LIST,
  type Label,
  type LabelGroup,
  type LabelInUse,
  labelGroupByName,
  labelsOf,
} from '../domain/labels.ts';
import type { DeviceOsType } from '../domain/devices.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { type ListSql, inIds, listConditions, pageOf } from './sql.ts';

type LabelField = 'id' | 'name' | 'displayName' | 'propertyGroupId' | 'propertyGroupName' | 'labelGroupName';
type GroupField = keyof (typeof LABEL_GROUP_LIST)['fields'];

/** Which labels a listing holds: all, one label group's, one device's, or one device group's selectors. */
export type LabelScope =
  | { readonly labelGroupId: number }
  | { readonly deviceId: number }
  | { readonly selectorsOf: number }
  | Record<string, never>;

const LABEL_SQL: ListSql<LabelField> = {
  columns: {
    id: 'l.id',
    name: 'l.name',
    displayName: 'l.display_name',
    propertyGroupId: 'l.group_id',
    propertyGroupName: 'lg.display_name',
    labelGroupName: 'lg.name',
  },
  searchColumns: ['l.display_name', 'lg.display_name'],
  tieBreaker: 'l.id',
};

const GROUP_SQL: ListSql<GroupField> = {
  columns: {
    id: 'id',
    name: 'name',
    displayName: 'display_name',
    hiddenByDefault: 'hidden_by_default',
    // As the presenter shows it (a bare 1 would be a column position in ORDER BY).
    labelsSortAscending: 'CAST(1 AS INTEGER)',
  },
  searchColumns: ['display_name'],
  tieBreaker: 'id',
};

/**
 * Gives the device exactly the labels its facts call for, making labels not seen before. A few
 * statements whatever the number of labels, and no writes when the labels are as they were
 * (hosts report every device at each hello).
 */
export async function syncDeviceLabels(db: Kysely<Tables>, deviceId: number, facts: DeviceFacts): Promise<void> {
  const values = labelsOf(facts).map((value) => ({ ...value, groupId: labelGroupByName(value.group).id }));
  const find = async () => {
    if (values.length === 0) return new Map<string, number>();
    const rows = await db
      .selectFrom('labels')
      .select(['id', 'group_id', 'name'])
      .where((eb) => eb.or(values.map((v) => eb.and([eb('group_id', '=', v.groupId), eb('name', '=', v.name)]))))
      .execute();
    return new Map(rows.map((row) => [`${row.group_id}:${row.name}`, Number(row.id)]));
  };
  let found = await find();
  const missing = values.filter((v) => !found.has(`${v.groupId}:${v.name}`));
  if (missing.length > 0) {
    await db
      .insertInto('labels')
      .values(missing.map((v) => ({ group_id: v.groupId, name: v.name, display_name: v.displayName })))
      .onConflict((oc) => oc.columns(['group_id', 'name']).doNothing())
      .execute();
    found = await find();
  }
  const wanted = [...new Set(values.map((v) => found.get(`${v.groupId}:${v.name}`)!))];
  const current = (
    await db.selectFrom('device_labels').select('label_id').where('device_id', '=', deviceId).execute()
  ).map((row) => Number(row.label_id));
  const stale = current.filter((id) => !wanted.includes(id));
  if (stale.length > 0)
    await db.deleteFrom('device_labels').where('device_id', '=', deviceId).where('label_id', 'in', stale).execute();
  const fresh = wanted.filter((id) => !current.includes(id));
  if (fresh.length > 0)
    await db
      .insertInto('device_labels')
      .values(fresh.map((labelId) => ({ device_id: deviceId, label_id: labelId })))
      .onConflict((oc) => oc.columns(['device_id', 'label_id']).doNothing())
      .execute();
}

/**
 * Whether device `d` is taken by the selectors of group `g` (aliases as written by the caller):
 * the rule of domain/labels.ts#matchesSelectors, plus the group's OS. For every label group its
 * selectors name, the device carries one of the selected labels of that group.
 */
export function selectedSql(g: string, d: string): RawBuilder<SqlBool> {
  const [group, device] = [sql.raw(g), sql.raw(d)];
  return sql<SqlBool>`(${device}.os_type = ${group}.os_type
    AND EXISTS (SELECT 1 FROM device_group_selectors s0 WHERE s0.group_id = ${group}.id)
    AND NOT EXISTS (
      SELECT 1 FROM device_group_selectors s1 JOIN labels l1 ON l1.id = s1.label_id
      WHERE s1.group_id = ${group}.id AND NOT EXISTS (
        SELECT 1 FROM device_group_selectors s2
        JOIN labels l2 ON l2.id = s2.label_id
        JOIN device_labels dl ON dl.label_id = s2.label_id
        WHERE s2.group_id = ${group}.id AND l2.group_id = l1.group_id AND dl.device_id = ${device}.id)))`;
}

/** Whether device `d` was added to group `g` by hand. */
export function addedSql(g: string, d: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`EXISTS (SELECT 1 FROM device_group_devices m WHERE m.group_id = ${sql.raw(g)}.id AND m.device_id = ${sql.raw(d)}.id)`;
}

/** Whether device `d` carries, for every label group among `labelIds`, one of those labels (the device list's `labelIds`). */
export function carriesSql(dialect: Dialect, d: string, labelIds: readonly number[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`NOT EXISTS (
    SELECT 1 FROM labels l1 WHERE ${inIds(dialect, 'l1.id', labelIds)} AND NOT EXISTS (
      SELECT 1 FROM labels l2 JOIN device_labels dl ON dl.label_id = l2.id
      WHERE ${inIds(dialect, 'l2.id', labelIds)} AND l2.group_id = l1.group_id AND dl.device_id = ${sql.raw(d)}.id))`;
}

export type LabelsStore = ReturnType<typeof labelsStore>;

export function labelsStore(db: Kysely<Tables>, dialect: Dialect) {
  const labels = () =>
    db
      .selectFrom('labels as l')
      .innerJoin('label_groups as lg', 'lg.id', 'l.group_id')
      .select(['l.id', 'l.group_id', 'l.name', 'l.display_name']);

  return {
    async listGroups(query: ListQuery<GroupField>): Promise<{ total: number; items: LabelGroup[] }> {
      const base = db.selectFrom('label_groups').where((eb) => eb.and(listConditions(dialect, query, GROUP_SQL)));
      const { total, rows } = await pageOf(base, (q) => q.selectAll(), query, GROUP_SQL);
      return { total, items: rows.map(toGroup) };
    },

    async findGroup(id: number): Promise<LabelGroup | undefined> {
      const row = await db.selectFrom('label_groups').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toGroup(row);
    },

    async list(query: ListQuery<LabelField>, scope: LabelScope = {}): Promise<{ total: number; items: Label[] }> {
      const base = db
        .selectFrom('labels as l')
        .innerJoin('label_groups as lg', 'lg.id', 'l.group_id')
        .where((eb) => eb.and(listConditions(dialect, query, LABEL_SQL)))
        .$if('labelGroupId' in scope, (q) =>
          q.where('l.group_id', '=', (scope as { labelGroupId: number }).labelGroupId),
        )
        .$if('deviceId' in scope, (q) =>
          q.where(
            sql<SqlBool>`EXISTS (SELECT 1 FROM device_labels dl WHERE dl.label_id = l.id AND dl.device_id = ${(scope as { deviceId: number }).deviceId})`,
          ),
        )
        .$if('selectorsOf' in scope, (q) =>
          q.where(
            sql<SqlBool>`EXISTS (SELECT 1 FROM device_group_selectors s WHERE s.label_id = l.id AND s.group_id = ${(scope as { selectorsOf: number }).selectorsOf})`,
          ),
        );
      const { total, rows } = await pageOf(
        base,
        (q) => q.select(['l.id', 'l.group_id', 'l.name', 'l.display_name']),
        query,
        LABEL_SQL,
      );
      return { total, items: rows.map(toLabel) };
    },

    async byIds(ids: readonly number[]): Promise<Map<number, Label>> {
      if (ids.length === 0) return new Map();
      const rows = await labels()
        .where(inIds(dialect, 'l.id', [...new Set(ids)]))
        .execute();
      return new Map(rows.map((row) => [Number(row.id), toLabel(row)]));
    },

    /** The labels each of `deviceIds` carries, by label group and name. */
    async ofDevices(deviceIds: readonly number[]): Promise<Map<number, Label[]>> {
      const result = new Map<number, Label[]>(deviceIds.map((id) => [id, []]));
      if (deviceIds.length === 0) return result;
      const rows = await labels()
        .innerJoin('device_labels as dl', 'dl.label_id', 'l.id')
        .select('dl.device_id')
        .where(inIds(dialect, 'dl.device_id', [...new Set(deviceIds)]))
        .orderBy('l.group_id')
        .orderBy('l.name')
        .execute();
      for (const row of rows) result.get(Number(row.device_id))?.push(toLabel(row));
      return result;
    },

    /** The labels some device carries, with the OS of those devices: what the device picker offers. */
    async inUse(): Promise<LabelInUse[]> {
      const rows = await labels()
        .innerJoin('device_labels as dl', 'dl.label_id', 'l.id')
        .innerJoin('devices as d', 'd.id', 'dl.device_id')
        .select([sql<string>`MIN(d.os_type)`.as('min_os'), sql<string>`MAX(d.os_type)`.as('max_os')])
        .groupBy(['l.id', 'l.group_id', 'l.name', 'l.display_name'])
        .orderBy('l.group_id')
        .orderBy('l.display_name')
        .orderBy('l.id')
        .execute();
      return rows.map((row) => ({
        ...toLabel(row),
        osType: row.min_os === row.max_os ? (row.min_os as DeviceOsType) : 'UNDEFINED',
      }));
    },

    async selectorsOf(groupId: number): Promise<Label[]> {
      const rows = await labels()
        .innerJoin('device_group_selectors as s', 's.label_id', 'l.id')
        .where('s.group_id', '=', groupId)
        .orderBy('l.group_id')
        .orderBy('l.name')
        .execute();
      return rows.map(toLabel);
    },

    async addSelectors(groupId: number, labelIds: readonly number[]): Promise<void> {
      if (labelIds.length === 0) return;
      await db
        .insertInto('device_group_selectors')
        .values([...new Set(labelIds)].map((labelId) => ({ group_id: groupId, label_id: labelId })))
        .onConflict((oc) => oc.columns(['group_id', 'label_id']).doNothing())
        .execute();
    },

    async removeSelector(groupId: number, labelId: number): Promise<boolean> {
      const result = await db
        .deleteFrom('device_group_selectors')
        .where('group_id', '=', groupId)
        .where('label_id', '=', labelId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

function toGroup(row: {
  id: number;
  name: string;
  display_name: string;
  hidden_by_default: number;
  os_type: string | null;
}): LabelGroup {
  return {
    id: Number(row.id),
    name: row.name,
    displayName: row.display_name,
    hiddenByDefault: row.hidden_by_default === 1,
    osType: row.os_type as DeviceOsType | null,
  };
}

function toLabel(row: { id: number; group_id: number; name: string; display_name: string }): Label {
  return { id: Number(row.id), groupId: Number(row.group_id), name: row.name, displayName: row.display_name };
}
