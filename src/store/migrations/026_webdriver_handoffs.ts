/**
 * Answers to WebDriver commands relayed in memory (services/webdriver-channels.ts) that reached
 * another server than the one holding the command: behind a load balancer without affinity the
 * agent's answer may land anywhere. That server leaves the answer here and notifies; the server
 * whose client waits takes it (deleting the row) and logs the command as any other.
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('webdriver_handoffs')
    // The in-memory command's id: drawn above 2^52, where the commands table's own ids never get to.
    .addColumn('command_id', t.id, (c) => c.primaryKey())
    .addColumn('device_run_id', t.id, (c) => c.notNull().references('device_runs.id').onDelete('cascade'))
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('answer_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webdriver_handoffs_device_run')
    .on('webdriver_handoffs')
    .column('device_run_id')
    .execute();
}
