/** Device runs (the legacy "device run" and the modern "device session" are one row) and their steps. */
import type { Kysely, Selectable } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import type { DeviceRun, DeviceRunState, ExcludeReason, RetryState, StepType } from '../domain/runs.ts';
import type { Dialect } from './db.ts';
import type { DeviceRunsTable, Tables } from './schema.ts';
import { type ListSql, inIds, listConditions, orderItems } from './sql.ts';

type DeviceRunField = 'id' | 'state' | 'createTime' | 'startTime' | 'endTime' | 'deviceId' | 'excludeReason';

const LIST_SQL: ListSql<DeviceRunField> = {
  columns: {
    id: 'id',
    state: 'state',
    createTime: 'create_time',
    startTime: 'start_time',
    endTime: 'end_time',
    deviceId: 'device_id',
    excludeReason: 'exclude_reason',
  },
  searchColumns: [],
  tieBreaker: 'id',
};

export interface NewDeviceRun {
  readonly testRunId: number;
  readonly projectId: number;
  readonly userId: number;
  readonly deviceId: number;
  readonly state: DeviceRunState;
  readonly excludeReason: ExcludeReason | null;
  readonly createTime: number;
  readonly timeLimit: number;
  readonly retryState: RetryState;
  readonly autoRetriesLeftCount: number;
}

export interface Step {
  readonly id: number;
  readonly deviceRunId: number;
  readonly type: StepType;
  readonly startTime: number;
  readonly finishTime: number | null;
  readonly failReason: string | null;
}

export type DeviceRunsStore = ReturnType<typeof deviceRunsStore>;

export function deviceRunsStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    async insert(run: NewDeviceRun): Promise<DeviceRun> {
      const row = await db
        .insertInto('device_runs')
        .values({
          test_run_id: run.testRunId,
          project_id: run.projectId,
          user_id: run.userId,
          device_id: run.deviceId,
          state: run.state,
          exclude_reason: run.excludeReason,
          create_time: run.createTime,
          time_limit: run.timeLimit,
          test_case_all_count: 0,
          test_case_passed_count: 0,
          test_case_failed_count: 0,
          test_case_skipped_count: 0,
          retry_state: run.retryState,
          auto_retries_left_count: run.autoRetriesLeftCount,
          current_step: run.state === 'WAITING' ? 'WAITING' : null,
          current_step_start_time: run.state === 'WAITING' ? run.createTime : null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toDeviceRun(row);
    },

    async findOwned(userId: number, id: number): Promise<DeviceRun | undefined> {
      const row = await db.selectFrom('device_runs').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return row && toDeviceRun(row);
    },

    async listOfRun(testRunId: number, query: ListQuery<DeviceRunField>): Promise<{ total: number; items: DeviceRun[] }> {
      const base = db
        .selectFrom('device_runs')
        .where('test_run_id', '=', testRunId)
        .where((eb) => eb.and(listConditions(dialect, query, LIST_SQL)));
      const counted = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      let page = base.selectAll();
      for (const item of orderItems(query.sort, LIST_SQL)) page = page.orderBy(item);
      if (query.limit > 0) page = page.limit(query.limit);
      if (query.offset > 0) page = page.offset(query.offset);
      return { total: Number(counted.total), items: (await page.execute()).map(toDeviceRun) };
    },

    /** Every device run of several test runs, in one statement. */
    async ofRuns(testRunIds: readonly number[]): Promise<DeviceRun[]> {
      if (testRunIds.length === 0) return [];
      const rows = await db.selectFrom('device_runs').selectAll().where(inIds(dialect, 'test_run_id', testRunIds)).orderBy('id').execute();
      return rows.map(toDeviceRun);
    },

    /** Records a device run's outcome and test case counts. */
    async finish(
      id: number,
      outcome: { state: DeviceRunState; endTime: number; counts: { all: number; passed: number; failed: number; skipped: number } },
    ): Promise<void> {
      await db
        .updateTable('device_runs')
        .set({
          state: outcome.state,
          end_time: outcome.endTime,
          test_case_all_count: outcome.counts.all,
          test_case_passed_count: outcome.counts.passed,
          test_case_failed_count: outcome.counts.failed,
          test_case_skipped_count: outcome.counts.skipped,
          current_step: null,
          current_step_start_time: null,
        })
        .where('id', '=', id)
        .execute();
    },

    async steps(deviceRunId: number): Promise<Step[]> {
      const rows = await db.selectFrom('device_run_steps').selectAll().where('device_run_id', '=', deviceRunId).orderBy('id').execute();
      return rows.map((row) => ({
        id: row.id,
        deviceRunId: row.device_run_id,
        type: row.type as StepType,
        startTime: row.start_time,
        finishTime: row.finish_time,
        failReason: row.fail_reason,
      }));
    },
  };
}

function toDeviceRun(row: Selectable<DeviceRunsTable>): DeviceRun {
  return {
    id: row.id,
    testRunId: row.test_run_id,
    projectId: row.project_id,
    userId: row.user_id,
    deviceId: row.device_id,
    state: row.state as DeviceRunState,
    excludeReason: row.exclude_reason as ExcludeReason | null,
    createTime: row.create_time,
    installTime: row.install_time,
    startTime: row.start_time,
    endTime: row.end_time,
    timeLimit: row.time_limit,
    testCaseAllCount: row.test_case_all_count,
    testCasePassedCount: row.test_case_passed_count,
    testCaseFailedCount: row.test_case_failed_count,
    testCaseSkippedCount: row.test_case_skipped_count,
    retryState: row.retry_state as RetryState,
    autoRetriesLeftCount: row.auto_retries_left_count,
    currentStep: row.current_step as StepType | null,
    currentStepStartTime: row.current_step_start_time,
  };
}
