/**
 * A user's device sessions across all their runs (`/me/device-sessions`, newest first) are read by
 * owner: without this index that list reads every user's device runs.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('device_runs_user_time').on('device_runs').columns(['user_id', 'create_time']).execute();
}
