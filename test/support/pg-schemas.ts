/**
 * PostgreSQL schemas for harnesses, migrated once and lent from test to test across the whole run.
 * Migrating a fresh schema costs 1–2 s on a busy machine, and the suite opened one per test;
 * emptying a used one costs a few milliseconds.
 *
 * The pool is a table in the database (in a schema named after the run's prefix, which
 * test/support/global-setup.ts drops at the end with the run's other schemas), so it serves every
 * worker and every file: vitest isolates files, and module state would die with each. A harness
 * gives its schema back after it closed its connections; the next taker empties it before use, so
 * nothing the previous test wrote up to its close survives. Without a run prefix (a file run
 * without the global setup) schemas are not pooled, as nothing would drop them.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../../src/store/db.ts';

const PREFIX = process.env.DEVICECLOUD_TEST_SCHEMA_PREFIX;
/** The schema holding the free list: it starts with the prefix, so teardown drops it too. */
const REGISTRY = PREFIX === undefined ? undefined : `${PREFIX}pool`;

/** A fresh schema name for this run, never handed out before. */
export function newSchemaName(): string {
  return `${PREFIX ?? 'dct_'}${randomBytes(6).toString('hex')}`;
}

/** A migrated schema given back by an earlier harness, taken for the caller alone; none: make one. */
export async function takeSchema(url: string): Promise<string | undefined> {
  if (REGISTRY === undefined) return undefined;
  return withClient(url, async (client) => {
    await ensureRegistry(client);
    const { rows } = await client.query<{ name: string }>(
      `DELETE FROM ${REGISTRY}.free WHERE name = (SELECT name FROM ${REGISTRY}.free LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING name`,
    );
    return rows[0]?.name;
  });
}

/** Lends the schema to the next harness; call after every connection to it is closed. */
export async function giveBackSchema(url: string, schema: string): Promise<void> {
  if (REGISTRY === undefined) return;
  await withClient(url, async (client) => {
    await ensureRegistry(client);
    await client.query(`INSERT INTO ${REGISTRY}.free (name) VALUES ($1) ON CONFLICT DO NOTHING`, [schema]);
  });
}

/**
 * Records what a fresh migration leaves in the tables (built-in label groups and labels) and the
 * sequences, once for the run: emptying a lent schema puts that back. Call right after migrating
 * a fresh schema, before it is used.
 */
export async function rememberMigratedState(database: Database): Promise<void> {
  if (REGISTRY === undefined || seedRemembered) return;
  const { tables, sequences } = await contents(database);
  const quoted = (name: string) => `"${database.schema!}"."${name}"`;
  const entries: Array<[string, string, unknown]> = [];
  for (const table of tables) {
    const { rows } = await sql<{
      rows: unknown[] | null;
    }>`SELECT json_agg(t) AS rows FROM ${sql.raw(quoted(table))} t`.execute(database.db);
    if (rows[0]?.rows != null) entries.push(['table', table, rows[0].rows]);
  }
  for (const sequence of sequences) {
    const { rows } = await sql<{
      last_value: string;
      is_called: boolean;
    }>`SELECT last_value, is_called FROM ${sql.raw(quoted(sequence))}`.execute(database.db);
    entries.push(['sequence', sequence, rows[0]]);
  }
  await sql.raw(`CREATE SCHEMA IF NOT EXISTS ${REGISTRY}`).execute(database.db).catch(ignoreRace);
  await sql
    .raw(
      `CREATE TABLE IF NOT EXISTS ${REGISTRY}.migrated (kind text, name text, state jsonb, PRIMARY KEY (kind, name))`,
    )
    .execute(database.db)
    .catch(ignoreRace);
  await database.db.transaction().execute(async (trx) => {
    for (const [kind, name, state] of entries)
      await sql`INSERT INTO ${sql.raw(REGISTRY)}.migrated (kind, name, state) VALUES (${kind}, ${name}, ${JSON.stringify(state)}::jsonb) ON CONFLICT DO NOTHING`.execute(
        trx,
      );
  });
  seedRemembered = true;
}

let seedRemembered = false;

/**
 * Puts the schema back as a fresh migration leaves it: every row deleted (but the migrations'
 * record), the rows the migrations insert put back, every sequence where they left it. DELETE
 * rather than TRUNCATE: TRUNCATE makes new files for every table and index (0.7–0.9 s for the 36
 * tables at load 5), DELETE of a few rows is a few milliseconds. Children before parents, so that
 * no foreign key stops it. One round trip: the statements go as one script, which PostgreSQL runs
 * as one transaction.
 */
export async function emptySchema(database: Database): Promise<void> {
  if (REGISTRY === undefined) throw new Error('schemas are lent only in a run with a schema prefix (global setup)');
  emptying ??= await emptyingScript(database, REGISTRY);
  await sql.raw(emptying).execute(database.db);
}

/** The same for every schema of the run (one set of migrations): names are left to search_path. */
let emptying: string | undefined;

async function emptyingScript(database: Database, registry: string): Promise<string> {
  const { tables, references } = await contents(database);
  const order = childrenFirst(tables, references);
  const { rows: migrated } = await sql<{
    kind: string;
    name: string;
    state: any;
  }>`SELECT kind, name, state FROM ${sql.raw(registry)}.migrated`.execute(database.db);
  const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
  const seeds = [...order].reverse().flatMap((table) => {
    const seed = migrated.find((row) => row.kind === 'table' && row.name === table);
    return seed === undefined
      ? []
      : [
          `INSERT INTO "${table}" OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::"${table}", ${literal(JSON.stringify(seed.state))})`,
        ];
  });
  const sequences = migrated
    .filter((row) => row.kind === 'sequence')
    .map(
      ({ name, state }) =>
        `SELECT setval(${literal(`"${name}"`)}, ${Number(state.last_value)}, ${Boolean(state.is_called)})`,
    );
  return [...order.map((table) => `DELETE FROM "${table}"`), ...seeds, ...sequences].join(';\n');
}

async function contents(database: Database): Promise<{
  tables: string[];
  references: Array<{ child: string; parent: string }>;
  sequences: string[];
}> {
  const schema = database.schema!;
  const { rows: tables } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p') AND c.relname <> 'kysely_migration'`.execute(database.db);
  const { rows: references } = await sql<{ child: string; parent: string }>`
    SELECT cc.relname AS child, pc.relname AS parent FROM pg_constraint k
    JOIN pg_class cc ON cc.oid = k.conrelid JOIN pg_class pc ON pc.oid = k.confrelid
    JOIN pg_namespace n ON n.oid = k.connamespace
    WHERE n.nspname = ${schema} AND k.contype = 'f' AND k.conrelid <> k.confrelid`.execute(database.db);
  const { rows: sequences } = await sql<{ name: string }>`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${schema} AND c.relkind = 'S'`.execute(database.db);
  return { tables: tables.map((row) => row.name), references, sequences: sequences.map((row) => row.name) };
}

/** The tables ordered so that each comes before every table it references. */
export function childrenFirst(
  tables: readonly string[],
  references: ReadonlyArray<{ child: string; parent: string }>,
): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const place = (table: string): void => {
    if (placed.has(table)) return;
    if (visiting.has(table))
      throw new Error(`foreign keys form a cycle through ${table}: the schema cannot be emptied`);
    visiting.add(table);
    // Every table that references this one goes first.
    for (const { child, parent } of references) if (parent === table) place(child);
    visiting.delete(table);
    placed.add(table);
    order.push(table);
  };
  for (const table of tables) place(table);
  return order;
}

let registryReady = false;

async function ensureRegistry(client: pg.PoolClient): Promise<void> {
  if (registryReady) return;
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${REGISTRY}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${REGISTRY}.free (name text PRIMARY KEY)`);
  } catch (error) {
    ignoreRace(error);
  }
  registryReady = true;
}

/** Two workers creating the same thing at once: IF NOT EXISTS does not stop the loser's unique violation. */
function ignoreRace(error: unknown): void {
  if ((error as { code?: string }).code !== '23505') throw error;
}

/** The registry's connections, kept between takes (a connection costs a backend start); idle ones do not keep the worker alive. */
let registryPool: pg.Pool | undefined;

async function withClient<T>(url: string, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  registryPool ??= new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 5000, allowExitOnIdle: true });
  const client = await registryPool.connect();
  try {
    return await use(client);
  } finally {
    client.release();
  }
}
