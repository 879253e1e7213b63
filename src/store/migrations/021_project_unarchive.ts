/**
 * When a project was last unarchived (docs/api.md#retention): an unused project's 90 days before
 * its files are removed count from then rather than from its creation, so that an unarchived
 * project is not archived again by the next pass of the retention job.
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema.alterTable('projects').addColumn('unarchive_time', t.timestamp).execute();
}
