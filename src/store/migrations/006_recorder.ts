/** The recorder tool: one current authorization per account, recordings and their steps. */
import { type Kysely, sql } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('recorder_authorizations')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('end_time', t.timestamp)
    .execute();
  // One current authorization per account, whatever races: the database refuses a second.
  await db.schema
    .createIndex('recorder_authorizations_current')
    .on('recorder_authorizations')
    .column('user_id')
    .unique()
    .where(sql.ref('end_time'), 'is', null)
    .execute();

  await db.schema
    .createTable('recordings')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('os_type', 'text')
    .addColumn('authorization_id', t.id, (c) => c.references('recorder_authorizations.id').onDelete('set null'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('step_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('end_time', t.timestamp)
    .execute();
  await db.schema.createIndex('recordings_user_time').on('recordings').columns(['user_id', 'create_time']).execute();

  await db.schema
    .createTable('recording_steps')
    .addColumn('recording_id', t.id, (c) => c.notNull().references('recordings.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('value', 'text')
    .addColumn('time', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('recording_steps_pk', ['recording_id', 'position'])
    .execute();
}
