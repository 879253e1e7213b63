/**
 * Interactive sessions (docs/api.md#interactive-sessions): the newest frame of each session's
 * screen, as its agent pushed it. A row, not a server's memory, so that the browser may watch
 * through any server: the server that stores a frame wakes the others (the notifier), and each
 * streams the row to its viewers. Base64 text: the same column on both engines. And the lines
 * of the device's log (logcat) as the agent sends them, for the session's log pane.
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('live_frames')
    .addColumn('device_run_id', t.id, (c) => c.primaryKey().references('device_runs.id').onDelete('cascade'))
    // Counts the frames of the session: a viewer sends a frame when it sees a higher one.
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('media_type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    // When the agent took it (its clock), for the latency viewers see.
    .addColumn('frame_time', t.timestamp, (c) => c.notNull())
    .addColumn('store_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('live_log_lines')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('device_run_id', t.id, (c) => c.notNull().references('device_runs.id').onDelete('cascade'))
    .addColumn('line', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('live_log_lines_session').on('live_log_lines').columns(['device_run_id', 'id']).execute();
}
