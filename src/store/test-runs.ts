/** Test runs, with the project name and starter e-mail the API shows beside each. */
import { type Kysely, sql } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import type { OsType } from '../domain/projects.ts';
import { type RunSecrets, type RunSettings, formatRunSettings, readRunSettings } from '../domain/run-settings.ts';
import { type DeviceRunState, type TestRun, type TestRunState, displayName } from '../domain/runs.ts';
import { type StateTally } from '../domain/run-stats.ts';
import { isCurrentDeviceRun } from './current-device-runs.ts';
import type { Dialect } from './db.ts';
import { runRowReaders } from './run-rows.ts';
import type { Tables } from './schema.ts';
import { sharedWith } from './sharing.ts';
import { PROJECT_LIST_SQL, USER_LIST_SQL, type UserRunField } from './run-list-columns.ts';
import { inIds, listConditions, pageOf, plainPages } from './sql.ts';

export interface RunRecord {
  readonly run: TestRun;
  readonly projectName: string;
  readonly startedByEmail: string;
}

export interface NewTestRun {
  readonly projectId: number;
  readonly userId: number;
  readonly name: string | null;
  readonly osType: OsType;
  readonly config: RunSettings;
  readonly frameworkId: number | null;
  readonly startedById: number;
  readonly createTime: number;
  readonly scheduler?: string;
  readonly hookUrl?: string | null;
}

/** A run's secrets as stored: sealed (services/secret-box.ts), with the id of the key that sealed them. */
export interface SealedRunSecrets {
  readonly keyId: string;
  readonly ciphertext: string;
}

/** Sealed, or (a row a previous release wrote during a rolling upgrade) still inside the settings. */
export type StoredRunSecrets = { readonly sealed: SealedRunSecrets } | { readonly inline: RunSecrets };

export type TestRunsStore = ReturnType<typeof testRunsStore>;

export function testRunsStore(db: Kysely<Tables>, dialect: Dialect) {
  const { toRun, toRecord } = runRowReaders();
  const joined = () =>
    db
      .selectFrom('test_runs as tr')
      .innerJoin('projects as p', 'p.id', 'tr.project_id')
      .innerJoin('users as u', 'u.id', 'tr.started_by_id');
  const withNames = <Q extends ReturnType<typeof joined>>(query: Q) =>
    query.selectAll('tr').select(['p.name as project_name', 'u.email as started_by_email']);
  const records = () => withNames(joined());
  // A project's runs as CI polls them, every few seconds.
  const plainProjectPages = plainPages(
    db,
    (projectId: number) => joined().where('tr.project_id', '=', projectId),
    withNames,
    PROJECT_LIST_SQL,
  );

  return {
    /**
     * Numbers are per project, the next after the highest. On PostgreSQL two run starts in one
     * project would read the same highest (READ COMMITTED) and collide on the unique number: the
     * project row is locked first, until the transaction ends. SQLite's write lock already orders them.
     */
    async insert(run: NewTestRun): Promise<TestRun> {
      if (dialect === 'postgres')
        await db.selectFrom('projects').select('id').where('id', '=', run.projectId).forUpdate().execute();
      const last = await db
        .selectFrom('test_runs')
        .select((eb) => eb.fn.max('number').as('max'))
        .where('project_id', '=', run.projectId)
        .executeTakeFirst();
      const row = await db
        .insertInto('test_runs')
        .values({
          project_id: run.projectId,
          user_id: run.userId,
          number: Number(last?.max ?? 0) + 1,
          name: run.name,
          state: 'WAITING',
          os_type: run.osType,
          create_time: run.createTime,
          config_json: formatRunSettings(run.config),
          framework_id: run.frameworkId,
          started_by_id: run.startedById,
          scheduler: run.scheduler ?? 'PARALLEL',
          hook_url: run.hookUrl ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRun(row);
    },

    async findOwned(userId: number, runId: number, projectId?: number): Promise<RunRecord | undefined> {
      let query = records().where('tr.id', '=', runId).where('tr.user_id', '=', userId);
      if (projectId !== undefined) query = query.where('tr.project_id', '=', projectId);
      const row = await query.executeTakeFirst();
      return row && toRecord(row);
    },

    /** The run if the user may read it: theirs, or of a project shared with them (docs/api.md#sharing). */
    async findReadable(userId: number, runId: number, projectId?: number): Promise<RunRecord | undefined> {
      let query = records()
        .where('tr.id', '=', runId)
        .where((eb) =>
          eb.or([eb('tr.user_id', '=', userId), eb('tr.project_id', 'in', sharedWith(db, 'project_id', userId))]),
        );
      if (projectId !== undefined) query = query.where('tr.project_id', '=', projectId);
      const row = await query.executeTakeFirst();
      return row && toRecord(row);
    },

    async list(projectId: number, query: ListQuery<UserRunField>): Promise<{ total: number; items: RunRecord[] }> {
      const { total, rows } =
        (await plainProjectPages(projectId, query)) ??
        (await pageOf(
          joined()
            .where('tr.project_id', '=', projectId)
            .where((eb) => eb.and(listConditions(dialect, query, PROJECT_LIST_SQL))),
          withNames,
          query,
          PROJECT_LIST_SQL,
        ));
      return { total, items: rows.map(toRecord) };
    },

    /** The user's runs in all their projects. */
    async listOfUser(userId: number, query: ListQuery<UserRunField>): Promise<{ total: number; items: RunRecord[] }> {
      const base = joined()
        .where('tr.user_id', '=', userId)
        .where((eb) => eb.and(listConditions(dialect, query, USER_LIST_SQL)));
      const { total, rows } = await pageOf(base, withNames, query, USER_LIST_SQL);
      return { total, items: rows.map(toRecord) };
    },

    /** Each run's display name and its project's name (for device sessions listed apart from their run). */
    async namesOf(
      runIds: readonly number[],
    ): Promise<Map<number, { testRunName: string; projectName: string; userEmail: string }>> {
      if (runIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('test_runs as tr')
        .innerJoin('projects as p', 'p.id', 'tr.project_id')
        .innerJoin('users as u', 'u.id', 'tr.user_id')
        .select(['tr.id', 'tr.name', 'tr.number', 'p.name as project_name', 'u.email as user_email'])
        .where(inIds(dialect, 'tr.id', runIds))
        .execute();
      return new Map(
        rows.map((row) => [
          row.id,
          { testRunName: displayName(row), projectName: row.project_name, userEmail: row.user_email },
        ]),
      );
    },

    /** The newest `perProject` runs of each project, in one statement. */
    async recentOf(projectIds: readonly number[], perProject: number): Promise<RunRecord[]> {
      if (projectIds.length === 0 || perProject === 0) return [];
      const ranked = records()
        .select(
          sql<number>`ROW_NUMBER() OVER (PARTITION BY tr.project_id ORDER BY tr.create_time DESC, tr.id DESC)`.as(
            'rank',
          ),
        )
        .where(inIds(dialect, 'tr.project_id', projectIds));
      const rows = await db
        .selectFrom(ranked.as('ranked'))
        .selectAll()
        .where('rank', '<=', perProject)
        .orderBy('create_time', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(toRecord);
    },

    /** Device-run counts per state (with test case sums) for each run, in one statement. */
    async tallies(runIds: readonly number[]): Promise<Map<number, StateTally[]>> {
      const tallies = new Map<number, StateTally[]>();
      if (runIds.length === 0) return tallies;
      const rows = await db
        .selectFrom('device_runs')
        .select((eb) => [
          'test_run_id',
          'state',
          eb.fn.countAll<number>().as('count'),
          eb.fn.sum<number>('test_case_all_count').as('all'),
          eb.fn.sum<number>('test_case_passed_count').as('passed'),
          eb.fn.sum<number>('test_case_failed_count').as('failed'),
          eb.fn.sum<number>('test_case_skipped_count').as('skipped'),
        ])
        .where(inIds(dialect, 'test_run_id', runIds))
        .where(isCurrentDeviceRun())
        .groupBy(['test_run_id', 'state'])
        .execute();
      for (const row of rows) {
        const list = tallies.get(row.test_run_id) ?? [];
        list.push({
          state: row.state as DeviceRunState,
          count: Number(row.count),
          testCaseAllCount: Number(row.all),
          testCasePassedCount: Number(row.passed),
          testCaseFailedCount: Number(row.failed),
          testCaseSkippedCount: Number(row.skipped),
        });
        tallies.set(row.test_run_id, list);
      }
      return tallies;
    },

    /**
     * A run that is not finished has no final tallies; `finish` records them. Both write what
     * `runUpdate` (domain/runs.ts) derived from the run's device runs, and nothing else writes a run's state.
     */
    async setState(
      runId: number,
      state: Exclude<TestRunState, 'FINISHED'>,
      times: { startTime?: number; endTime?: null },
    ): Promise<void> {
      await db
        .updateTable('test_runs')
        .set({
          state,
          final_tallies_json: null,
          ...(times.startTime !== undefined && { start_time: times.startTime }),
          ...(times.endTime !== undefined && { end_time: times.endTime }),
        })
        .where('id', '=', runId)
        .execute();
    },

    /** The run is finished (again, when a late result changed what it adds up to). */
    async finish(
      runId: number,
      times: { startTime?: number; endTime?: number },
      tallies: readonly StateTally[],
    ): Promise<void> {
      await db
        .updateTable('test_runs')
        .set({
          state: 'FINISHED',
          final_tallies_json: JSON.stringify(tallies),
          ...(times.startTime !== undefined && { start_time: times.startTime }),
          ...(times.endTime !== undefined && { end_time: times.endTime }),
        })
        .where('id', '=', runId)
        .execute();
    },

    async findById(runId: number): Promise<TestRun | undefined> {
      const row = await db.selectFrom('test_runs').selectAll().where('id', '=', runId).executeTakeFirst();
      return row && toRun(row);
    },

    /**
     * The run, locked until the transaction ends (PostgreSQL; SQLite transactions are serial
     * anyway): whoever derives the run's state from its device runs does so one at a time, and
     * sees what the one before committed.
     */
    /** The run's state as last committed, without a lock (a claim's check that its run already runs). */
    async stateOf(runId: number): Promise<TestRunState | undefined> {
      const row = await db.selectFrom('test_runs').select('state').where('id', '=', runId).executeTakeFirst();
      return row?.state as TestRunState | undefined;
    },

    async stateForUpdate(runId: number): Promise<Pick<TestRun, 'state' | 'startTime'> | undefined> {
      let query = db.selectFrom('test_runs').select(['state', 'start_time']).where('id', '=', runId);
      // NO KEY UPDATE: rows referencing the run take KEY SHARE locks on it, which this must not wait for.
      if (dialect === 'postgres') query = query.forNoKeyUpdate();
      const row = await query.executeTakeFirst();
      return row && { state: row.state as TestRunState, startTime: row.start_time };
    },

    async insertSecrets(runId: number, sealed: SealedRunSecrets): Promise<void> {
      await db
        .insertInto('test_run_secrets')
        .values({ test_run_id: runId, sealed: sealed.ciphertext, key_id: sealed.keyId })
        .execute();
    },

    /** The run's secrets, or undefined when it has none. Only the agent's assignment asks. */
    async secretsOf(runId: number): Promise<StoredRunSecrets | undefined> {
      const row = await db
        .selectFrom('test_run_secrets')
        .select(['sealed', 'key_id'])
        .where('test_run_id', '=', runId)
        .executeTakeFirst();
      if (row !== undefined) return { sealed: { keyId: row.key_id, ciphertext: row.sealed } };
      const run = await db
        .selectFrom('test_runs')
        .select(['id', 'config_json'])
        .where('id', '=', runId)
        .executeTakeFirst();
      const inline = run && readRunSettings(run.config_json, `The settings of test run ${run.id}`).inlineSecrets;
      return inline ? { inline } : undefined;
    },

    /** Runs whose secrets were sealed with another key than `keyId`, oldest first, a page at a time. */
    async secretsSealedWithOtherKey(
      keyId: string,
      afterRunId: number,
      limit: number,
    ): Promise<Array<SealedRunSecrets & { testRunId: number }>> {
      const rows = await db
        .selectFrom('test_run_secrets')
        .select(['test_run_id', 'sealed', 'key_id'])
        .where('key_id', '!=', keyId)
        .where('test_run_id', '>', afterRunId)
        .orderBy('test_run_id')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ testRunId: row.test_run_id, keyId: row.key_id, ciphertext: row.sealed }));
    },

    /** Re-seals one run's secrets, unless they changed meanwhile (or the run is gone). */
    async resealSecrets(runId: number, from: SealedRunSecrets, to: SealedRunSecrets): Promise<boolean> {
      const result = await db
        .updateTable('test_run_secrets')
        .set({ sealed: to.ciphertext, key_id: to.keyId })
        .where('test_run_id', '=', runId)
        .where('sealed', '=', from.ciphertext)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** How many runs' secrets each key id sealed. */
    async secretsCountByKeyId(): Promise<Map<string, number>> {
      const rows = await db
        .selectFrom('test_run_secrets')
        .select(['key_id'])
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .groupBy('key_id')
        .execute();
      return new Map(rows.map((row) => [row.key_id, Number(row.count)]));
    },

    async hookUrlOf(runId: number): Promise<string | null> {
      const row = await db.selectFrom('test_runs').select('hook_url').where('id', '=', runId).executeTakeFirst();
      return row?.hook_url ?? null;
    },

    /** null: the run shows its default name again (domain/runs.ts displayName). */
    async rename(runId: number, name: string | null): Promise<void> {
      await db.updateTable('test_runs').set({ name }).where('id', '=', runId).execute();
    },

    async delete(runId: number): Promise<void> {
      await db.deleteFrom('test_runs').where('id', '=', runId).execute();
    },
  };
}
