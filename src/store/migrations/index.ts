/**
 * Numbered migrations, run at start-up by every role that opens the database. On PostgreSQL,
 * Kysely's migrator holds an advisory lock, so several servers starting together apply each
 * migration once.
 */
import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Database } from '../db.ts';
import { type ColumnTypes, columnTypes } from './column-types.ts';
import * as m001 from './001_core.ts';

type Step = (db: Kysely<unknown>, types: ColumnTypes) => Promise<void>;

const STEPS: ReadonlyArray<readonly [string, Step]> = [['001_core', m001.up]];

export async function migrate(database: Database): Promise<void> {
  const types = columnTypes(database.dialect);
  const provider: MigrationProvider = {
    async getMigrations() {
      const migrations: Record<string, Migration> = {};
      for (const [name, up] of STEPS) migrations[name] = { up: (db) => up(db, types) };
      return migrations;
    },
  };
  const { error, results } = await new Migrator({
    db: database.db,
    provider,
    // Without it Kysely finds its lock table in any schema of the database, not just ours.
    migrationTableSchema: database.schema,
  }).migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
