/** What device runs produce besides files: test case results and CPU/memory samples. */
import type { Kysely } from 'kysely';
import type { StoredSample } from '../domain/runs.ts';
import type { StoredTestCase, TestCase, TestCaseResult } from '../domain/test-cases.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { inIds } from './sql.ts';

/** Rows per INSERT; keeps statements under SQLite's and PostgreSQL's parameter limits. */
const BATCH = 500;

export type ResultsStore = ReturnType<typeof resultsStore>;

export function resultsStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    /** Stores a device run's test cases, replacing any earlier report of them. */
    async deleteTestCases(deviceRunId: number): Promise<void> {
      await db.deleteFrom('test_case_runs').where('device_run_id', '=', deviceRunId).execute();
    },

    async insertTestCases(deviceRunId: number, testCases: readonly TestCase[]): Promise<void> {
      for (let i = 0; i < testCases.length; i += BATCH) {
        await db
          .insertInto('test_case_runs')
          .values(
            testCases.slice(i, i + BATCH).map((testCase) => ({
              device_run_id: deviceRunId,
              suite_name: testCase.suiteName,
              class_name: testCase.className,
              method_name: testCase.methodName,
              duration: int4(testCase.duration),
              result: testCase.result,
              error_message: testCase.errorMessage,
              stacktrace: testCase.stacktrace,
            })),
          )
          .execute();
      }
    },

    async testCases(deviceRunId: number, onlyResult?: TestCaseResult): Promise<StoredTestCase[]> {
      let query = db.selectFrom('test_case_runs').selectAll().where('device_run_id', '=', deviceRunId);
      if (onlyResult !== undefined) query = query.where('result', '=', onlyResult);
      const rows = await query.orderBy('id').execute();
      return rows.map((row) => ({
        id: row.id,
        deviceRunId: row.device_run_id,
        suiteName: row.suite_name,
        className: row.class_name,
        methodName: row.method_name,
        duration: row.duration,
        result: row.result as TestCaseResult,
        errorMessage: row.error_message,
        stacktrace: row.stacktrace,
      }));
    },

    async addSamples(deviceRunId: number, samples: readonly StoredSample[]): Promise<void> {
      for (let i = 0; i < samples.length; i += BATCH) {
        await db
          .insertInto('performance_samples')
          .values(
            samples.slice(i, i + BATCH).map((sample) => ({
              device_run_id: deviceRunId,
              timestamp: sample.timestamp,
              cpu_usage: sample.cpuUsage,
              mem_usage: sample.memUsage === null ? null : int4(sample.memUsage),
              package_name: sample.packageName,
            })),
          )
          .execute();
      }
    },

    /** Those of `deviceRunIds` that reported at least one performance sample. */
    async sampled(deviceRunIds: readonly number[]): Promise<Set<number>> {
      if (deviceRunIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('performance_samples')
        .select('device_run_id')
        .distinct()
        .where(inIds(dialect, 'device_run_id', deviceRunIds))
        .execute();
      return new Set(rows.map((row) => row.device_run_id));
    },

    async samples(deviceRunId: number): Promise<StoredSample[]> {
      const rows = await db
        .selectFrom('performance_samples')
        .select(['timestamp', 'cpu_usage', 'mem_usage', 'package_name'])
        .where('device_run_id', '=', deviceRunId)
        .orderBy('timestamp')
        .orderBy('id')
        .execute();
      return rows.map((row) => ({
        timestamp: row.timestamp,
        cpuUsage: row.cpu_usage,
        memUsage: row.mem_usage,
        packageName: row.package_name,
      }));
    },
  };
}

/**
 * Durations (ms) and memory (kB) are 32-bit columns on PostgreSQL; a test report claiming more than
 * 24 days, or a sample of more than 2 TB, is kept at the largest value rather than failing the whole
 * report (which the agent would keep retrying).
 */
function int4(value: number): number {
  return Math.min(Math.round(value), 2_147_483_647);
}
