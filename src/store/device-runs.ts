/**
 * Device runs (the legacy "device run" and the modern "device session" are one row). Their step
 * timeline is device-run-steps.ts, part of the same store.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import {
  DEVICE_RUN_MACHINE,
  type DeviceRun,
  type DeviceRunState,
  type ExcludeReason,
  FINAL_DEVICE_RUN_STATES,
  type RetryState,
  type StepType,
  UNFINISHED_DEVICE_RUN_STATES,
  UNSTARTED_DEVICE_RUN_STATES,
} from '../domain/runs.ts';
import type { DeviceRunListField } from '../domain/user-lists.ts';
import { isCurrentDeviceRun } from './current-device-runs.ts';
import { deviceRunStepsStore } from './device-run-steps.ts';
import type { Dialect } from './db.ts';
import type { DeviceRunsTable, Tables } from './schema.ts';
import { sharedWith } from './sharing.ts';
import { deviceRunListSql } from './run-list-columns.ts';
import { inIds, listConditions, pageOf } from './sql.ts';

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
  /** The owner's plan priority (higher goes first). */
  readonly priority: number;
  readonly frameworkKind: string | null;
  readonly serialGroup: number | null;
  readonly singleGroup: number | null;
  readonly retriedFromId: number | null;
}

export type DeviceRunsStore = ReturnType<typeof deviceRunsStore>;

export function deviceRunsStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    ...deviceRunStepsStore(db, dialect),
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
          priority: run.priority,
          framework_kind: run.frameworkKind,
          serial_group: run.serialGroup,
          single_group: run.singleGroup,
          retried_from_id: run.retriedFromId,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (run.state === 'WAITING') {
        await db
          .insertInto('device_run_steps')
          .values({ device_run_id: row.id, type: 'WAITING', start_time: run.createTime })
          .execute();
      }
      return toDeviceRun(row);
    },

    async findById(id: number): Promise<DeviceRun | undefined> {
      const row = await db.selectFrom('device_runs').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toDeviceRun(row);
    },

    /**
     * Whether a run's current device runs are not all final, and whether any has started: what
     * decides the run's state, answered from the index in one statement however large the run.
     */
    async progressOfRun(testRunId: number): Promise<{ unfinished: boolean; started: boolean }> {
      const current = (states: readonly DeviceRunState[], negate: boolean) =>
        sql<number>`EXISTS (SELECT 1 FROM device_runs WHERE test_run_id = ${testRunId} AND ${isCurrentDeviceRun()} AND state ${sql.raw(negate ? 'NOT IN' : 'IN')} (${sql.join(states)}))`;
      const row = await db
        .selectNoFrom([
          current(UNFINISHED_DEVICE_RUN_STATES, false).as('unfinished'),
          current(UNSTARTED_DEVICE_RUN_STATES, true).as('started'),
        ])
        .executeTakeFirstOrThrow();
      return { unfinished: Boolean(row.unfinished), started: Boolean(row.started) };
    },

    /** Device runs of a run that still count (a retried one is replaced by its new session). */
    async currentOfRun(testRunId: number): Promise<DeviceRun[]> {
      const rows = await db
        .selectFrom('device_runs')
        .selectAll()
        .where('test_run_id', '=', testRunId)
        .where(isCurrentDeviceRun())
        .orderBy('id')
        .execute();
      return rows.map(toDeviceRun);
    },

    /**
     * Accepts an agent's batch once, for a device run `agentId` holds and may still report on (not
     * ended, or ended by the user's abort), and answers the device run: one statement where reading
     * it and then accepting took two. Undefined when it is not held, or when `seq` is not new (the
     * agent retried after a lost answer): the caller reads it to tell which.
     */
    async acceptReport(id: number, agentId: number, seq: number): Promise<DeviceRun | undefined> {
      const row = await db
        .updateTable('device_runs')
        .set({ last_seq: seq })
        .where('id', '=', id)
        .where('agent_id', '=', agentId)
        .where('last_seq', '<', seq)
        .where(
          'state',
          'not in',
          [...FINAL_DEVICE_RUN_STATES].filter((state) => state !== 'ABORTED'),
        )
        .returningAll()
        .executeTakeFirst();
      return row && toDeviceRun(row);
    },

    /**
     * Moves a device run by `event` (to `to`, when the event has several targets), if its state is
     * one the event starts from; answers whether it moved. An end time closes its open step.
     */
    async transition(
      id: number,
      event: 'abort' | 'exclude',
      fields: { endTime?: number; failReason?: string | null; excludeReason?: ExcludeReason } = {},
    ): Promise<boolean> {
      const result = await db
        .updateTable('device_runs')
        .set({
          state: DEVICE_RUN_MACHINE.target(event),
          ...(fields.endTime !== undefined && {
            end_time: fields.endTime,
            current_step: null,
            current_step_start_time: null,
          }),
          ...(fields.failReason !== undefined && { fail_reason: fields.failReason }),
          ...(fields.excludeReason !== undefined && { exclude_reason: fields.excludeReason }),
        })
        .where('id', '=', id)
        .where('state', 'in', [...DEVICE_RUN_MACHINE.from(event)])
        .executeTakeFirst();
      if (fields.endTime !== undefined) {
        await db
          .updateTable('device_run_steps')
          .set({ finish_time: fields.endTime })
          .where('device_run_id', '=', id)
          .where('finish_time', 'is', null)
          .execute();
      }
      return Number(result.numUpdatedRows) > 0;
    },

    async testRunIdsOf(ids: readonly number[]): Promise<Map<number, number>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('device_runs')
        .select(['id', 'test_run_id'])
        .where(inIds(dialect, 'id', ids))
        .execute();
      return new Map(rows.map((row) => [row.id, row.test_run_id]));
    },

    /**
     * Marks a device run replaced by a retry; false when it already was (a concurrent retry won: on
     * PostgreSQL the second UPDATE waits for the row and then finds it replaced), so one retry, not two.
     */
    async markSuperseded(id: number): Promise<boolean> {
      const result = await db
        .updateTable('device_runs')
        .set({ superseded: 1 })
        .where('id', '=', id)
        .where(isCurrentDeviceRun())
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async findOwned(userId: number, id: number): Promise<DeviceRun | undefined> {
      const row = await db
        .selectFrom('device_runs')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row && toDeviceRun(row);
    },

    /** The device run if the user may read it: theirs, or of a project shared with them (docs/api.md#sharing). */
    async findReadable(userId: number, id: number): Promise<DeviceRun | undefined> {
      const row = await db
        .selectFrom('device_runs')
        .selectAll()
        .where('id', '=', id)
        .where((eb) =>
          eb.or([eb('user_id', '=', userId), eb('project_id', 'in', sharedWith(db, 'project_id', userId))]),
        )
        .executeTakeFirst();
      return row && toDeviceRun(row);
    },

    /** A run's current device sessions, on the fields of a user's list of them (docs/api.md#lists). */
    async listOfRun(
      testRunId: number,
      query: ListQuery<DeviceRunListField>,
      now: number,
    ): Promise<{ total: number; items: DeviceRun[] }> {
      const spec = deviceRunListSql(now);
      const base = db
        .selectFrom('device_runs as dr')
        .innerJoin('devices as d', 'd.id', 'dr.device_id')
        .where('dr.test_run_id', '=', testRunId)
        .where(isCurrentDeviceRun('dr'))
        .where((eb) => eb.and(listConditions(dialect, query, spec)));
      const { total, rows } = await pageOf(base, (q) => q.selectAll('dr'), query, spec);
      return { total, items: rows.map(toDeviceRun) };
    },

    /** The user's current device sessions in all their runs (replaced ones left out). */
    async listOfUser(
      userId: number,
      query: ListQuery<DeviceRunListField>,
      now: number,
    ): Promise<{ total: number; items: DeviceRun[] }> {
      const spec = deviceRunListSql(now);
      const base = db
        .selectFrom('device_runs as dr')
        .innerJoin('devices as d', 'd.id', 'dr.device_id')
        .where('dr.user_id', '=', userId)
        .where(isCurrentDeviceRun('dr'))
        .where((eb) => eb.and(listConditions(dialect, query, spec)));
      const { total, rows } = await pageOf(base, (q) => q.selectAll('dr'), query, spec);
      return { total, items: rows.map(toDeviceRun) };
    },

    /** The current device runs of several test runs, in one statement. */
    async ofRuns(testRunIds: readonly number[]): Promise<DeviceRun[]> {
      if (testRunIds.length === 0) return [];
      const rows = await db
        .selectFrom('device_runs')
        .selectAll()
        .where(inIds(dialect, 'test_run_id', testRunIds))
        .where(isCurrentDeviceRun())
        .orderBy('id')
        .execute();
      return rows.map(toDeviceRun);
    },

    /**
     * Ends a device run (event `end`) and says whether this call ended it. A device run already final
     * (aborted by the user, or ended by a concurrent report: a lost agent's lease and its restarted
     * agent's hello) keeps its state and end time but takes the results; one not yet started is left
     * as it is. The transition is one conditional UPDATE, so on PostgreSQL a concurrent ender waits
     * for the row and then finds it final: exactly one caller ends it, and only that one may retry it.
     */
    async finish(
      id: number,
      outcome: {
        state: DeviceRunState;
        endTime: number;
        counts: { all: number; passed: number; failed: number; skipped: number };
        failReason?: string | null;
      },
    ): Promise<boolean> {
      const results = {
        fail_reason: outcome.failReason ?? null,
        test_case_all_count: outcome.counts.all,
        test_case_passed_count: outcome.counts.passed,
        test_case_failed_count: outcome.counts.failed,
        test_case_skipped_count: outcome.counts.skipped,
        current_step: null,
        current_step_start_time: null,
      };
      const ended = await db
        .updateTable('device_runs')
        .set({ ...results, state: DEVICE_RUN_MACHINE.target('end', outcome.state), end_time: outcome.endTime })
        .where('id', '=', id)
        .where('state', 'in', DEVICE_RUN_MACHINE.from('end'))
        .executeTakeFirst();
      const kept =
        Number(ended.numUpdatedRows) > 0 ||
        (await db
          .updateTable('device_runs')
          .set({ ...results, end_time: (eb) => eb.fn.coalesce('end_time', eb.val(outcome.endTime)) })
          .where('id', '=', id)
          .where('state', 'in', [...FINAL_DEVICE_RUN_STATES])
          .executeTakeFirst()
          .then((result) => Number(result.numUpdatedRows) > 0));
      if (kept)
        await db
          .updateTable('device_run_steps')
          .set({ finish_time: outcome.endTime })
          .where('device_run_id', '=', id)
          .where('finish_time', 'is', null)
          .execute();
      return Number(ended.numUpdatedRows) > 0;
    },
  };
}

export function toDeviceRun(row: Selectable<DeviceRunsTable>): DeviceRun {
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
    failReason: row.fail_reason,
    superseded: row.superseded === 1,
    agentId: row.agent_id,
    frameworkKind: row.framework_kind,
    retriedFromId: row.retried_from_id,
    priority: row.priority,
    serialGroup: row.serial_group,
    singleGroup: row.single_group,
  };
}
