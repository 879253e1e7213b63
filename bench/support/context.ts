/**
 * A store and an app for a benchmark, in this process: SQLite in memory or a fresh PostgreSQL
 * schema (dropped on close), counting the SQL statements executed.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/api/app.ts';
import { memoryNotifier, postgresNotifier } from '../../src/store/notifier.ts';
import { type Context, DEFAULT_LIMITS } from '../../src/services/context.ts';
import { directoryBlobStore } from '../../src/store/blobs.ts';
import { openDatabase, postgresAnswers } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { createStore } from '../../src/store/store.ts';
import { fixedKeyRing, generateSecretKey } from '../../src/services/secret-box.ts';

export type Engine = 'sqlite' | 'postgres';

export const POSTGRES_URL = process.env.DEVICECLOUD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchContext {
  readonly ctx: Context;
  readonly app: FastifyInstance;
  /** Statements executed since the last reset. */
  statements(): number;
  resetStatements(): void;
  close(): Promise<void>;
}

/** Whether PostgreSQL answers here; the PostgreSQL half of a suite is skipped (and says so) when not. */
export const postgresReachable = () => postgresAnswers(POSTGRES_URL);

export async function openBenchContext(
  engine: Engine,
  /** listenNotify: on PostgreSQL, wake-ups go through LISTEN/NOTIFY as between servers in production. */
  options: { sqliteFile?: string; poolSize?: number; listenNotify?: boolean } = {},
): Promise<BenchContext> {
  let statements = 0;
  // BENCH_PROFILE=1: time spent per SQL statement, printed on close.
  const profile = process.env.BENCH_PROFILE === '1' ? new Map<string, { count: number; ms: number }>() : undefined;
  const schema = engine === 'postgres' ? `dcbench_${randomBytes(5).toString('hex')}` : undefined;
  const database = await openDatabase({
    databaseUrl: engine === 'postgres' ? POSTGRES_URL : undefined,
    sqliteFile: options.sqliteFile ?? ':memory:',
    pgSchema: schema,
    pgPoolSize: options.poolSize ?? 10,
    onQuery: (sql, ms) => {
      statements += 1;
      if (profile !== undefined) {
        const entry = profile.get(sql) ?? { count: 0, ms: 0 };
        entry.count += 1;
        entry.ms += ms;
        profile.set(sql, entry);
      }
    },
  });
  await migrate(database);
  const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-'));
  const ctx: Context = {
    store: createStore(database),
    clock: Date.now,
    blobs: directoryBlobStore(blobDir),
    notifier:
      options.listenNotify === true && schema !== undefined
        ? await postgresNotifier({ url: POSTGRES_URL, schema, db: database.db, log: () => undefined })
        : memoryNotifier(),
    limits: DEFAULT_LIMITS,
    flavour: 'private',
    keyRing: fixedKeyRing([generateSecretKey()], 'the bench'),
  };
  const app = await buildApp({ ctx, version: 'bench' });
  await app.ready();
  return {
    ctx,
    app,
    statements: () => statements,
    resetStatements: () => {
      statements = 0;
    },
    async close() {
      if (profile !== undefined) {
        const top = [...profile.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15);
        for (const [sql, { count, ms }] of top)
          process.stderr.write(
            `[profile] ${ms.toFixed(0).padStart(7)} ms ${String(count).padStart(7)}x  ${sql.replace(/\s+/g, ' ').slice(0, 220)}\n`,
          );
      }
      await app.close();
      await ctx.notifier.close();
      await database.close();
      fs.rmSync(blobDir, { recursive: true, force: true });
      if (schema !== undefined) {
        const client = new pg.Client({ connectionString: POSTGRES_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    },
  };
}

/** A database of its own on the benchmarks' PostgreSQL server, dropped by `drop`. */
export async function postgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `dcbench_${randomBytes(5).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
