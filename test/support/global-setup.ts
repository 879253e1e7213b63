/**
 * Builds the compiled CLI from the current sources before any test spawns it (bin/devicecloud.js
 * runs build/, never the TypeScript), so that no test runs a build older than an edit.
 * Gives this test run a PostgreSQL schema prefix of its own, and drops the run's schemas at the
 * end, rather than test by test, which keeps test teardown fast.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';

const URL = process.env.DEVICECLOUD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export default function setup(): () => Promise<void> {
  // Incremental (tools/build.js): well under a second when nothing changed.
  execFileSync(process.execPath, [path.resolve(import.meta.dirname, '../../tools/build.js')], { stdio: 'inherit' });
  const prefix = `dct_${randomBytes(4).toString('hex')}_`;
  process.env.DEVICECLOUD_TEST_SCHEMA_PREFIX = prefix;
  return async () => {
    const client = new pg.Client({ connectionString: URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      const { rows } = await client.query<{ nspname: string }>(
        'SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)',
        [prefix],
      );
      for (const { nspname } of rows) await client.query(`DROP SCHEMA ${nspname} CASCADE`);
    } catch {
      // No PostgreSQL: nothing was created.
    } finally {
      await client.end().catch(() => undefined);
    }
  };
}
