/**
 * The store engines the integration suite runs on: SQLite always, PostgreSQL when one answers at
 * DEVICECLOUD_TEST_DATABASE_URL (default: the local test database). Without one the PostgreSQL
 * half is skipped with a visible message, unless DEVICECLOUD_REQUIRE_POSTGRES=1 (CI), which makes
 * its absence a failure.
 */
import { postgresAnswers } from '../../src/store/db.ts';

export type Engine = 'sqlite' | 'postgres';

export const POSTGRES_URL = process.env.DEVICECLOUD_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const reachable = await postgresAnswers(POSTGRES_URL);
if (!reachable) {
  if (process.env.DEVICECLOUD_REQUIRE_POSTGRES === '1') {
    throw new Error(`PostgreSQL is required (DEVICECLOUD_REQUIRE_POSTGRES=1) but ${POSTGRES_URL} does not answer`);
  }
  console.warn(
    `\n*** PostgreSQL at ${POSTGRES_URL} is not reachable: the PostgreSQL half of this suite is SKIPPED ***\n`,
  );
}

export const ENGINES: readonly Engine[] = reachable ? ['sqlite', 'postgres'] : ['sqlite'];
