/**
 * A performance sample's memory may be unknown (iOS devices report CPU only): `mem_usage` becomes
 * nullable. SQLite cannot drop NOT NULL, so there the table is rebuilt with its rows and index.
 */
import { type Kysely, sql } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  if (t.dialect === 'postgres') {
    await sql`ALTER TABLE performance_samples ALTER COLUMN mem_usage DROP NOT NULL`.execute(db);
    return;
  }
  await db.schema
    .createTable('performance_samples_new')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('device_run_id', t.id, (c) => c.notNull().references('device_runs.id').onDelete('cascade'))
    .addColumn('timestamp', t.timestamp, (c) => c.notNull())
    .addColumn('cpu_usage', 'real', (c) => c.notNull())
    .addColumn('mem_usage', 'integer')
    .addColumn('package_name', 'text')
    .execute();
  await sql`INSERT INTO performance_samples_new (id, device_run_id, timestamp, cpu_usage, mem_usage, package_name)
    SELECT id, device_run_id, timestamp, cpu_usage, mem_usage, package_name FROM performance_samples`.execute(db);
  await db.schema.dropTable('performance_samples').execute();
  await db.schema.alterTable('performance_samples_new').renameTo('performance_samples').execute();
  await db.schema
    .createIndex('performance_samples_run')
    .on('performance_samples')
    .columns(['device_run_id', 'timestamp'])
    .execute();
}
