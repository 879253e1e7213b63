/**
 * A finished run keeps the device-run tallies it ended with, so listing finished runs (most of
 * what users read) needs no count over their device runs (docs/benchmarks.md).
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, _t: ColumnTypes): Promise<void> {
  await db.schema.alterTable('test_runs').addColumn('final_tallies_json', 'text').execute();
}
