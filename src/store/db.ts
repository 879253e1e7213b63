/**
 * Opens the database: SQLite (the default, one file under the data dir, WAL) or PostgreSQL (the
 * scale-out store, when a postgres:// URL is given). Everything above this file sees one Kysely
 * instance and a dialect name; only store/ modules use either.
 */
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type LogEvent,
} from 'kysely';
import pg from 'pg';
import { isPostgresUrl } from '../domain/database-url.ts';
import type { Tables } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<Tables>;
  readonly dialect: Dialect;
  /** PostgreSQL only: the schema holding the tables. */
  readonly schema?: string;
  /** Where the data lives, for start-up messages (no credentials). */
  readonly location: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres://… selects PostgreSQL; otherwise SQLite at `sqliteFile`. */
  readonly databaseUrl?: string;
  /** A file path or ':memory:'. */
  readonly sqliteFile?: string;
  /** PostgreSQL only: use (and create) this schema, so that tests can share one database. */
  readonly pgSchema?: string;
  readonly pgPoolSize?: number;
  /** Called for every executed statement (tests count queries with it, benchmarks time them). */
  readonly onQuery?: (sql: string, durationMs: number) => void;
  /** Where to report trouble that no request sees (an idle PostgreSQL connection cut by a restart). */
  readonly log?: (message: string) => void;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const log = options.onQuery
    ? (event: LogEvent) => options.onQuery!(event.query.sql, event.queryDurationMillis)
    : undefined;
  if (options.databaseUrl !== undefined && isPostgresUrl(options.databaseUrl)) {
    return openPostgres(options.databaseUrl, options, log);
  }
  return openSqlite(options.sqliteFile ?? ':memory:', log);
}

function openSqlite(file: string, log: ((event: LogEvent) => void) | undefined): Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Tables>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }), log });
  return { db, dialect: 'sqlite', location: file, close: () => db.destroy() };
}

/**
 * Kysely prepares every statement anew; SQLite spends as long preparing our short statements as
 * running them. The store's SQL is a bounded set of texts (values are parameters), so each is
 * prepared once. Statements are only ever run to completion (`all`/`run`), so sharing one is safe.
 */
function withStatementCache(sqlite: BetterSqlite3.Database, limit = 500): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = (source: string) => {
    let statement = cache.get(source);
    if (statement === undefined) {
      statement = sqlite.prepare(source);
      // SQL built with inline lists (e.g. long IN lists) could grow the set: keep the newest.
      if (cache.size >= limit) cache.delete(cache.keys().next().value!);
      cache.set(source, statement);
    }
    return statement;
  };
  return new Proxy(sqlite, {
    get: (target, property) => {
      if (property === 'prepare') return prepare;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Transactions begin IMMEDIATE: a deferred one that reads and then writes cannot wait for another
 * process's write lock (SQLite answers "database is locked" at once instead of using busy_timeout),
 * and the admin commands write to the file a running server holds.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

async function openPostgres(
  url: string,
  options: DatabaseOptions,
  log: ((event: LogEvent) => void) | undefined,
): Promise<Database> {
  const schema = options.pgSchema;
  if (schema !== undefined) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`Invalid PostgreSQL schema name '${schema}'`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } catch (error) {
      // Two creating the same schema at once: IF NOT EXISTS does not stop the loser's unique violation.
      if ((error as { code?: string }).code !== '23505') throw error;
    } finally {
      await client.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.pgPoolSize ?? 10,
    // Ids, timestamps and counts are bigint/numeric on PostgreSQL; every one of them fits a double.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID || oid === NUMERIC_OID
          ? Number
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
    options: schema === undefined ? undefined : `-c search_path=${schema}`,
  });
  // A restart of PostgreSQL cuts every connection. The pool reports an idle one's loss on its own
  // 'error' event; a connection checked out between two statements (a transaction awaiting other
  // work) reports it on the client's. Unheard, either event ends the process. The statement that
  // next uses a lost connection fails (answered 503), and the pool does not take it back.
  // The client's own listener reports both (the pool re-emits an idle client's error on itself).
  pool.on('connect', (client) =>
    client.on('error', (error) =>
      options.log?.(`database: a connection was lost (${error.message}); the pool replaces it`),
    ),
  );
  pool.on('error', () => undefined);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }), log });
  return { db, dialect: 'postgres', schema: schema ?? 'public', location: redactUrl(url), close: () => db.destroy() };
}

/** Whether a PostgreSQL server answers at `url` (tests and benchmarks skip their PostgreSQL half when not). */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A database URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}
