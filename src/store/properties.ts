/**
 * The cloud's system properties (domain/properties.ts): one table, read by everyone signed in,
 * written by operators; the name of the operator who last wrote one is read from their account.
 */
import type { Kysely, Selectable } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import type { PROPERTY_LIST, Property, PropertyDraft } from '../domain/properties.ts';
import type { Dialect } from './db.ts';
import type { PropertiesTable, Tables } from './schema.ts';
import { type ListSql, listConditions, pageOf } from './sql.ts';

type PropertyField = keyof (typeof PROPERTY_LIST)['fields'];

const UPDATER_NAME =
  "(SELECT COALESCE(NULLIF(TRIM(u.first_name || ' ' || u.last_name), ''), u.email) FROM users u WHERE u.id = pr.updated_by)";

const LIST_SQL: ListSql<PropertyField> = {
  columns: {
    id: 'pr.id',
    name: 'pr.name',
    value: 'pr.value',
    description: 'pr.description',
    fromTime: 'pr.from_time',
    toTime: 'pr.to_time',
    updateTime: 'pr.update_time',
    updatedById: 'pr.updated_by',
    updatedByDisplayName: UPDATER_NAME,
  },
  searchColumns: ['pr.name', 'pr.value', 'pr.description'],
  tieBreaker: 'pr.id',
};

export type PropertiesStore = ReturnType<typeof propertiesStore>;

export function propertiesStore(db: Kysely<Tables>, dialect: Dialect) {
  const withUpdater = () =>
    db
      .selectFrom('properties as pr')
      .leftJoin('users as u', 'u.id', 'pr.updated_by')
      .selectAll('pr')
      .select(['u.first_name', 'u.last_name', 'u.email']);
  return {
    async list(query: ListQuery<PropertyField>): Promise<{ total: number; items: Property[] }> {
      const conditions = listConditions(dialect, query, LIST_SQL);
      const base = db
        .selectFrom('properties as pr')
        .leftJoin('users as u', 'u.id', 'pr.updated_by')
        .where((eb) => eb.and(conditions));
      const { total, rows } = await pageOf(
        base,
        (q) => q.selectAll('pr').select(['u.first_name', 'u.last_name', 'u.email']),
        query,
        LIST_SQL,
      );
      return { total, items: rows.map(toProperty) };
    },

    async find(id: number): Promise<Property | undefined> {
      const row = await withUpdater().where('pr.id', '=', id).executeTakeFirst();
      return row && toProperty(row);
    },

    async insert(draft: PropertyDraft, updatedBy: number, now: number): Promise<number> {
      const row = await db
        .insertInto('properties')
        .values({ ...columnsOf(draft), update_time: now, updated_by: updatedBy })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    },

    /** False when there is no such property. */
    async update(id: number, draft: PropertyDraft, updatedBy: number, now: number): Promise<boolean> {
      const result = await db
        .updateTable('properties')
        .set({ ...columnsOf(draft), update_time: now, updated_by: updatedBy })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async delete(id: number): Promise<boolean> {
      const result = await db.deleteFrom('properties').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

function columnsOf(draft: PropertyDraft) {
  return {
    name: draft.name,
    value: draft.value,
    description: draft.description,
    from_time: draft.fromTime,
    to_time: draft.toTime,
  };
}

const maybeNumber = (value: number | string | null) => (value === null ? null : Number(value));

function toProperty(
  row: Selectable<PropertiesTable> & { first_name: string | null; last_name: string | null; email: string | null },
): Property {
  const fullName = `${row.first_name ?? ''} ${row.last_name ?? ''}`.trim();
  return {
    id: Number(row.id),
    name: row.name,
    value: row.value,
    description: row.description,
    fromTime: maybeNumber(row.from_time),
    toTime: maybeNumber(row.to_time),
    updateTime: Number(row.update_time),
    updatedById: maybeNumber(row.updated_by),
    updatedByDisplayName: row.updated_by === null ? null : fullName === '' ? row.email : fullName,
  };
}
