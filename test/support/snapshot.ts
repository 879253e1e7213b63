/**
 * What a store holds, cheaply enough to take around every request: the row count of every table
 * (found in the database, so tables added later are included) and every file under the blob
 * directory with its size, temporary files included. Two equal snapshots mean nothing was added,
 * removed or left half-written, and `version` catches updates in place, which counts cannot see.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/store/db.ts';
import { POSTGRES_URL } from './engines.ts';

export interface StoreSnapshot {
  readonly rows: Readonly<Record<string, number>>;
  readonly blobs: readonly string[];
  /**
   * Moves when rows change in place. SQLite: total_changes(), which also counts changes later rolled
   * back (see writesIn); PostgreSQL: each table's newest row version (xmin), which an UPDATE renews.
   */
  readonly version: string;
}

export async function tableNames(database: Database): Promise<string[]> {
  if (database.dialect === 'sqlite') {
    const { rows } = await sql<{
      name: string;
    }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`.execute(
      database.db,
    );
    return rows.map((row) => row.name);
  }
  const { rows } = await sql<{
    name: string;
  }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ${database.schema ?? 'public'} AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(
    database.db,
  );
  return rows.map((row) => row.name);
}

/** A snapshot function bound to the tables present now (one statement per snapshot). */
export async function snapshotter(database: Database, blobDir: string): Promise<() => Promise<StoreSnapshot>> {
  const tables = await tableNames(database);
  if (tables.length === 0) throw new Error('no tables found: the snapshot would prove nothing');
  const postgres = database.dialect === 'postgres';
  const newest = () => (postgres ? sql`COALESCE(MAX(xmin::text::bigint), 0)::text` : sql`total_changes()`);
  // Qualified by schema on PostgreSQL: the statement runs on connections of its own (below).
  const tableOf = (table: string) => sql.table(postgres ? `${database.schema ?? 'public'}.${table}` : table);
  const counts = sql.join(
    tables.map(
      (table) =>
        sql`SELECT ${sql.lit(table)} AS name, COUNT(*) AS count, ${newest()} AS version FROM ${tableOf(table)}`,
    ),
    sql` UNION ALL `,
  );
  // Compiled once: turning the forty-way query into SQL again for every snapshot cost as much as
  // running it on SQLite.
  const compiled = sql<CountRow>`${counts}`.compile(database.db);
  const read = postgres ? prepared(compiled.sql) : async () => (await database.db.executeQuery(compiled)).rows;
  return async () => {
    const rows = await read();
    return {
      rows: Object.fromEntries(rows.map((row) => [row.name, Number(row.count)])),
      blobs: listFiles(blobDir),
      version: rows.map((row) => String(row.version)).join(','),
    };
  };
}

interface CountRow {
  name: string;
  count: number | string;
  version: number | string;
}

/**
 * The statement, prepared once per connection. Planning its UNION of some forty counts took three
 * to four times as long as running it, and the hostile-input drive takes a snapshot after each of
 * its ~12,000 requests: most of PostgreSQL's CPU in those files (docs/benchmarks.md, "The suite's
 * CPU, fourth round"). Kysely cannot name a statement, hence a pool of its own on the test database
 * (every harness's schema is there); it reads committed rows as the app's pool does, and when idle
 * it neither holds a connection nor keeps the worker alive.
 */
function prepared(text: string): () => Promise<CountRow[]> {
  snapshotPool ??= new pg.Pool({
    connectionString: POSTGRES_URL,
    max: 1,
    idleTimeoutMillis: 5000,
    allowExitOnIdle: true,
  });
  const pool = snapshotPool;
  const name = `store-snapshot-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
  return async () => (await pool.query<CountRow>({ name, text })).rows;
}

let snapshotPool: pg.Pool | undefined;

/** Every file (content-addressed, so its name stands for its bytes) and, in tmp/, its size too. */
function listFiles(root: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(root, full);
    found.push(relative.startsWith('tmp') ? `${relative}:${fs.statSync(full).size}` : relative);
  }
  return found.sort();
}

/** How two snapshots differ, in words; '' when they are equal. */
export function difference(before: StoreSnapshot, after: StoreSnapshot): string {
  const changes: string[] = [];
  for (const table of new Set([...Object.keys(before.rows), ...Object.keys(after.rows)])) {
    if (before.rows[table] !== after.rows[table])
      changes.push(`${table}: ${before.rows[table]} → ${after.rows[table]} rows`);
  }
  const was = new Set(before.blobs);
  const is = new Set(after.blobs);
  for (const file of after.blobs) if (!was.has(file)) changes.push(`blob added ${file}`);
  for (const file of before.blobs) if (!is.has(file)) changes.push(`blob removed ${file}`);
  if (changes.length === 0 && before.version !== after.version) changes.push('rows changed in place');
  return changes.join('; ');
}

/**
 * Write statements that took effect among `statements` (as the harness records them): those outside
 * a transaction, and those of transactions that committed. A rolled-back transaction wrote nothing.
 */
export function writesIn(statements: readonly string[]): string[] {
  const effective: string[] = [];
  let pending: string[] | undefined;
  for (const statement of statements) {
    const text = statement.trim().toLowerCase();
    if (text.startsWith('begin') || text.startsWith('start transaction')) pending = [];
    else if (text.startsWith('commit')) {
      effective.push(...(pending ?? []));
      pending = undefined;
    } else if (text.startsWith('rollback')) pending = undefined;
    else if (/^(insert|update|delete|replace)\b/.test(text)) (pending ?? effective).push(statement);
  }
  return effective;
}
