/**
 * Numbered migrations, run at start-up by every role that opens the database, all pending ones in
 * one transaction. On PostgreSQL the transaction first takes an advisory lock, so several
 * servers starting together apply each migration once.
 *
 * Our own runner rather than Kysely's Migrator: that one introspects every table of every schema
 * in the database to find its own two tables, which fails when another schema is created or
 * dropped meanwhile (tests sharing a database, other applications). The bookkeeping table keeps
 * the Migrator's name and layout, so databases it migrated carry on unchanged.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../db.ts';
import { type ColumnTypes, columnTypes } from './column-types.ts';
import * as m001 from './001_core.ts';
import * as m002 from './002_runs_on_devices.ts';
import * as m003 from './003_oauth_tokens.ts';
import * as m004 from './004_web_sessions.ts';
import * as m005 from './005_final_tallies.ts';
import * as m006 from './006_recorder.ts';
import * as m007 from './007_unknown_memory.ts';
import * as m008 from './008_sealed_api_keys.ts';
import * as m009 from './009_storage_quotas.ts';
import * as m010 from './010_run_secrets.ts';
import * as m011 from './011_device_runs_by_user.ts';
import * as m012 from './012_user_contact.ts';
import * as m016 from './016_device_labels.ts';
import * as m018 from './018_sharing.ts';
import * as m020 from './020_account_pages.ts';
import * as m021 from './021_project_unarchive.ts';
import * as m023 from './023_live_frames.ts';
import * as m024 from './024_properties.ts';
import * as m025 from './025_webdriver.ts';
import * as m026 from './026_webdriver_handoffs.ts';

/** What a step may need besides the database: the key that seals API keys (008) and run secrets (010). */
export type MigrationOptions = m008.MigrationSecrets & {
  /** Tests only: stop after this step, to see a later one move older data. */
  readonly through?: string;
};

type Step = (db: Kysely<unknown>, types: ColumnTypes, options: MigrationOptions) => Promise<void>;

const STEPS: ReadonlyArray<readonly [string, Step]> = [
  ['001_core', m001.up],
  ['002_runs_on_devices', m002.up],
  ['003_oauth_tokens', m003.up],
  ['004_web_sessions', m004.up],
  ['005_final_tallies', m005.up],
  ['006_recorder', m006.up],
  ['007_unknown_memory', m007.up],
  ['008_sealed_api_keys', m008.up],
  ['009_storage_quotas', m009.up],
  ['010_run_secrets', m010.up],
  ['011_device_runs_by_user', m011.up],
  ['012_user_contact', m012.up],
  ['016_device_labels', m016.up],
  ['018_sharing', m018.up],
  ['020_account_pages', m020.up],
  ['021_project_unarchive', m021.up],
  ['023_live_frames', m023.up],
  ['024_properties', m024.up],
  ['025_webdriver', m025.up],
  ['026_webdriver_handoffs', m026.up],
];

const TABLE = 'kysely_migration';
/**
 * Any constant both roles agree on: "devicecloud" in ASCII, as a bigint. The lock taken is this
 * seed hashed with the schema the connection works in: servers of one schema still migrate one at
 * a time, while schemas sharing a database (tests, several deployments) do not wait on each other.
 */
const ADVISORY_LOCK_KEY = 0x6465766963656c6fn;

export async function migrate(database: Database, options: MigrationOptions = {}): Promise<void> {
  const types = columnTypes(database.dialect);
  const db = database.db as unknown as Kysely<{ kysely_migration: { name: string; timestamp: string } }>;
  let current = '';
  const applied: string[] = [];
  try {
    await db.transaction().execute(async (trx) => {
      if (database.dialect === 'postgres')
        await sql`SELECT pg_advisory_xact_lock(hashtextextended(current_schema(), ${ADVISORY_LOCK_KEY.toString()}::bigint))`.execute(
          trx,
        );
      await trx.schema
        .createTable(TABLE)
        .ifNotExists()
        .addColumn('name', 'varchar(255)', (c) => c.notNull().primaryKey())
        .addColumn('timestamp', 'varchar(255)', (c) => c.notNull())
        .execute();
      const done = new Set((await trx.selectFrom(TABLE).select('name').execute()).map((row) => row.name));
      const unknown = [...done].filter((name) => !STEPS.some(([step]) => step === name));
      if (unknown.length > 0) {
        throw new Error(`the database was migrated by a newer devicecloud (${unknown.join(', ')}); upgrade this one`);
      }
      for (const [name, up] of STEPS) {
        if (!done.has(name)) {
          current = name;
          await up(trx as unknown as Kysely<unknown>, types, options);
          await trx.insertInto(TABLE).values({ name, timestamp: new Date().toISOString() }).execute();
          applied.push(name);
        }
        if (name === options.through) break;
      }
    });
    // The write-ahead log still holds pages written before (users inserted with their plain API
    // key, runs with their passwords): empty it, so that only the sealed secrets remain on disk.
    if (
      database.dialect === 'sqlite' &&
      (applied.includes('008_sealed_api_keys') || applied.includes('010_run_secrets'))
    ) {
      current = 'checkpoint';
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(database.db);
    }
  } catch (error) {
    throw new Error(
      `Database migration ${current || 'setup'} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
