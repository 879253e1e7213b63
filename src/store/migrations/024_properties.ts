/**
 * The cloud's system properties (docs/api.md#properties), written by operators and read by every
 * signed-in user. The operator who last wrote one is kept while their account is.
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('properties')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('description', 'text')
    .addColumn('from_time', t.timestamp)
    .addColumn('to_time', t.timestamp)
    .addColumn('update_time', t.timestamp, (c) => c.notNull())
    .addColumn('updated_by', t.id, (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('properties_name').on('properties').columns(['name', 'id']).execute();
}
