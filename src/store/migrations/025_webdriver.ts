/**
 * Appium client side (docs/api.md#appium-client-side): a WebDriver session is a device run's, and
 * every command a client sends is a row that the agent holding the device takes and answers. The
 * table is both the relay between servers (any server may receive a command; the agent polls any
 * server) and the session's command log.
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('webdriver_sessions')
    // 32 random hex digits: what the client holds, the only credential of its later commands.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('device_run_id', t.id, (c) => c.notNull().unique().references('device_runs.id').onDelete('cascade'))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    // Set when the client deleted the session or the cloud ended it; later commands are unknown.
    .addColumn('end_time', t.timestamp)
    .execute();
  await db.schema
    .createTable('webdriver_commands')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('device_run_id', t.id, (c) => c.notNull().references('device_runs.id').onDelete('cascade'))
    .addColumn('method', 'text', (c) => c.notNull())
    // The path below /session/{id}, or '' for newSession.
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    // PENDING, TAKEN (by the agent), ANSWERED.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('answer', 'text')
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('answer_time', t.timestamp)
    .execute();
  await db.schema
    .createIndex('webdriver_commands_device_run')
    .on('webdriver_commands')
    .columns(['device_run_id', 'state'])
    .execute();
}
