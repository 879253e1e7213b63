/**
 * Flaky tests of a project (domain/flaky-tests.ts), found in SQL: test case results grouped by
 * test and app build, kept where both PASSED and FAILED occur. The build is read from the run's
 * settings (the file it installs), so the JSON functions differ between the engines.
 */
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { FlakyOutcome, FlakyTest, FlakyTestField } from '../domain/flaky-tests.ts';
import { HISTORY_LIMIT, flakyTestKey } from '../domain/flaky-tests.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { type ListSql, listConditions, orderItems } from './sql.ts';

const LIST_SQL: ListSql<FlakyTestField> = {
  columns: {
    className: 'ft.class_name',
    methodName: 'ft.method_name',
    appSha256: 'ft.app',
    passedCount: 'ft.passed_count',
    failedCount: 'ft.failed_count',
    lastSeenTime: 'ft.last_seen',
  },
  searchColumns: ['ft.class_name', 'ft.method_name'],
  tieBreaker: "ft.class_name || '#' || ft.method_name || '@' || ft.app",
};

/** The build a run tested: the SHA-256 of the file it installs (its id once the file is gone). */
function appOfRun(dialect: Dialect): RawBuilder<string> {
  if (dialect === 'postgres') {
    return sql<string>`COALESCE((SELECT COALESCE(f.sha256, 'file:' || (j ->> 'id')) FROM jsonb_array_elements(tr.config_json::jsonb -> 'files') j LEFT JOIN files f ON f.id = (j ->> 'id')::bigint WHERE j ->> 'action' = 'INSTALL' LIMIT 1), '')`;
  }
  return sql<string>`COALESCE((SELECT COALESCE(f.sha256, 'file:' || json_extract(j.value, '$.id')) FROM json_each(tr.config_json, '$.files') j LEFT JOIN files f ON f.id = json_extract(j.value, '$.id') WHERE json_extract(j.value, '$.action') = 'INSTALL' LIMIT 1), '')`;
}

/** Every decided outcome (skips say nothing about flakiness) of the project's tests, with its build. */
function casesOf(dialect: Dialect, projectId: number): RawBuilder<unknown> {
  return sql`SELECT tc.class_name, tc.method_name, tc.result, dr.id AS device_run_id, dr.test_run_id,
      dr.device_id, d.display_name AS device_name,
      COALESCE(dr.end_time, dr.start_time, dr.create_time) AS seen, ${appOfRun(dialect)} AS app
    FROM test_case_runs tc
    JOIN device_runs dr ON dr.id = tc.device_run_id
    JOIN test_runs tr ON tr.id = dr.test_run_id
    JOIN devices d ON d.id = dr.device_id
    WHERE dr.project_id = ${projectId} AND tc.result IN ('PASSED', 'FAILED')`;
}

function flakyOf(dialect: Dialect, projectId: number): RawBuilder<unknown> {
  return sql`cases AS (${casesOf(dialect, projectId)}),
    ft AS (
      SELECT class_name, method_name, app,
        SUM(CASE WHEN result = 'PASSED' THEN 1 ELSE 0 END) AS passed_count,
        SUM(CASE WHEN result = 'FAILED' THEN 1 ELSE 0 END) AS failed_count,
        MAX(seen) AS last_seen
      FROM cases GROUP BY class_name, method_name, app
      HAVING SUM(CASE WHEN result = 'PASSED' THEN 1 ELSE 0 END) > 0
        AND SUM(CASE WHEN result = 'FAILED' THEN 1 ELSE 0 END) > 0)`;
}

interface FlakyRow {
  class_name: string;
  method_name: string;
  app: string;
  passed_count: number | string;
  failed_count: number | string;
  last_seen: number | string;
}

interface CaseRow {
  class_name: string;
  method_name: string;
  app: string;
  result: 'PASSED' | 'FAILED';
  device_run_id: number | string;
  test_run_id: number | string;
  device_id: number | string;
  device_name: string;
  seen: number | string;
}

const keyOf = (row: { class_name: string; method_name: string; app: string }) =>
  JSON.stringify([row.class_name, row.method_name, row.app]);

export type FlakyTestsStore = ReturnType<typeof flakyTestsStore>;

export function flakyTestsStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    async list(projectId: number, query: ListQuery<FlakyTestField>): Promise<{ total: number; items: FlakyTest[] }> {
      const conditions = listConditions(dialect, query, LIST_SQL);
      const where = conditions.length === 0 ? sql<SqlBool>`1 = 1` : sql<SqlBool>`${sql.join(conditions, sql` AND `)}`;
      const flaky = flakyOf(dialect, projectId);
      const counted = await sql<{
        total: number | string;
      }>`WITH ${flaky} SELECT COUNT(*) AS total FROM ft WHERE ${where}`.execute(db);
      const total = Number(counted.rows[0]?.total ?? 0);
      // limit=0 means all; SQLite accepts OFFSET only after a LIMIT, so "all" is spelt as a huge one.
      const limit = query.limit > 0 ? query.limit : Number.MAX_SAFE_INTEGER;
      const page = await sql<FlakyRow>`WITH ${flaky} SELECT * FROM ft WHERE ${where}
        ORDER BY ${sql.join(orderItems(query.sort, LIST_SQL))} LIMIT ${limit} OFFSET ${query.offset}`.execute(db);
      if (page.rows.length === 0) return { total, items: [] };
      const history = await this.history(projectId, page.rows);
      return {
        total,
        items: page.rows.map((row) => ({
          className: row.class_name,
          methodName: row.method_name,
          appSha256: row.app,
          passedCount: Number(row.passed_count),
          failedCount: Number(row.failed_count),
          lastSeenTime: Number(row.last_seen),
          history: history.get(keyOf(row)) ?? [],
        })),
      };
    },

    /**
     * Which of one device session's tests are flaky on the build its run installs (the same rule as
     * the list): `flakyTestKey`s of those that both passed and failed on it somewhere in the project.
     */
    async flakyInSession(projectId: number, deviceRunId: number): Promise<Set<string>> {
      const rows = await sql<{ class_name: string; method_name: string }>`WITH ${flakyOf(dialect, projectId)}
        SELECT ft.class_name, ft.method_name FROM ft
        WHERE ft.app = (SELECT ${appOfRun(dialect)} FROM device_runs dr JOIN test_runs tr ON tr.id = dr.test_run_id
            WHERE dr.id = ${deviceRunId})
          AND EXISTS (SELECT 1 FROM test_case_runs x WHERE x.device_run_id = ${deviceRunId}
            AND x.class_name = ft.class_name AND x.method_name = ft.method_name)`.execute(db);
      return new Set(rows.rows.map((row) => flakyTestKey(row.class_name, row.method_name)));
    },

    /** The outcomes of the page's tests, newest first, grouped by test and build. */
    async history(projectId: number, tests: readonly FlakyRow[]): Promise<Map<string, FlakyOutcome[]>> {
      const classes = [...new Set(tests.map((test) => test.class_name))];
      const methods = [...new Set(tests.map((test) => test.method_name))];
      const wanted = new Set(tests.map(keyOf));
      const rows = await sql<CaseRow>`WITH cases AS (${casesOf(dialect, projectId)})
        SELECT * FROM cases
        WHERE class_name IN (${sql.join(classes)}) AND method_name IN (${sql.join(methods)})
        ORDER BY seen DESC, device_run_id DESC`.execute(db);
      const byTest = new Map<string, FlakyOutcome[]>();
      for (const row of rows.rows) {
        const key = keyOf(row);
        if (!wanted.has(key)) continue;
        const outcomes = byTest.get(key) ?? [];
        if (outcomes.length >= HISTORY_LIMIT) continue;
        outcomes.push({
          runId: Number(row.test_run_id),
          deviceSessionId: Number(row.device_run_id),
          deviceId: Number(row.device_id),
          deviceName: row.device_name,
          result: row.result,
          time: Number(row.seen),
        });
        byTest.set(key, outcomes);
      }
      return byTest;
    },
  };
}
