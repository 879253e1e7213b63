/**
 * The statements of the retention job (jobs/retention.ts): archiving old runs by each
 * project's strategy, emptying and removing unused projects, and telling which blobs are still
 * referenced. Each answers what it removed, for the job's log; each removes at most `limit` at a
 * time so that a long backlog never holds one long transaction.
 */
import { type Kysely, sql } from 'kysely';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { inIds } from './sql.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface ArchivedRun {
  readonly id: number;
  readonly projectId: number;
}

export type RetentionStore = ReturnType<typeof retentionStore>;

export function retentionStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    /** Finished runs older than their project's `archivingItemCount` days (strategy DAYS). */
    async archiveRunsOlderThanDays(now: number, limit: number): Promise<ArchivedRun[]> {
      const due = await db
        .selectFrom('test_runs as tr')
        .innerJoin('projects as p', 'p.id', 'tr.project_id')
        .select('tr.id')
        .where('p.archiving_strategy', '=', 'DAYS')
        .where('tr.state', '=', 'FINISHED')
        .where(
          sql<boolean>`tr.create_time < CAST(${now} AS BIGINT) - CAST(p.archiving_item_count AS BIGINT) * ${DAY_MS}`,
        )
        .limit(limit)
        .execute();
      return deleteRuns(due.map((row) => row.id));
    },

    /** Finished runs beyond the newest `archivingItemCount` of their project (strategy RUNS). */
    async archiveRunsBeyondCount(limit: number): Promise<ArchivedRun[]> {
      const ranked = db
        .selectFrom('test_runs as tr')
        .innerJoin('projects as p', 'p.id', 'tr.project_id')
        .select([
          'tr.id as id',
          'tr.state as state',
          'p.archiving_item_count as keep',
          sql<number>`ROW_NUMBER() OVER (PARTITION BY tr.project_id ORDER BY tr.create_time DESC, tr.id DESC)`.as(
            'position',
          ),
        ])
        .where('p.archiving_strategy', '=', 'RUNS');
      const due = await db
        .selectFrom(ranked.as('ranked'))
        .select('id')
        .where('state', '=', 'FINISHED')
        .whereRef('position', '>', 'keep')
        .limit(limit)
        .execute();
      return deleteRuns(due.map((row) => row.id));
    },

    /**
     * Projects in which no test has ever run, created (or last unarchived) before `createdBefore` and not emptied yet:
     * their files are deleted and `archive_time` says when. Answers the projects emptied.
     */
    async emptyUnusedProjects(
      createdBefore: number,
      now: number,
      limit: number,
    ): Promise<Array<{ id: number; files: number }>> {
      const projects = await db
        .selectFrom('projects as p')
        .select('p.id')
        .where(sql<number>`COALESCE(p.unarchive_time, p.create_time)`, '<', createdBefore)
        .where('p.archive_time', 'is', null)
        .where((eb) =>
          eb.not(eb.exists(eb.selectFrom('test_runs as tr').select('tr.id').whereRef('tr.project_id', '=', 'p.id'))),
        )
        .limit(limit)
        .execute();
      const ids = projects.map((project) => project.id);
      if (ids.length === 0) return [];
      const files = await db
        .deleteFrom('files')
        .where(inIds(dialect, 'project_id', ids))
        .returning('project_id')
        .execute();
      await db
        .updateTable('projects')
        .set({ archive_time: now })
        .where(inIds(dialect, 'id', ids))
        .execute();
      return ids.map((id) => ({ id, files: files.filter((file) => file.project_id === id).length }));
    },

    /** Emptied projects in which still no test has run, emptied before `emptiedBefore`: removed. */
    async removeEmptiedProjects(emptiedBefore: number, limit: number): Promise<number[]> {
      const due = await db
        .selectFrom('projects as p')
        .select('p.id')
        .where('p.archive_time', '<', emptiedBefore)
        .where((eb) =>
          eb.not(eb.exists(eb.selectFrom('test_runs as tr').select('tr.id').whereRef('tr.project_id', '=', 'p.id'))),
        )
        .limit(limit)
        .execute();
      if (due.length === 0) return [];
      const rows = await db
        .deleteFrom('projects')
        .where(
          inIds(
            dialect,
            'id',
            due.map((row) => row.id),
          ),
        )
        .returning('id')
        .execute();
      return rows.map((row) => row.id);
    },

    /** Which of these blob keys some file still uses. */
    async referencedBlobs(keys: readonly string[]): Promise<Set<string>> {
      if (keys.length === 0) return new Set();
      const rows = await db.selectFrom('files').select('blob_key').distinct().where('blob_key', 'in', keys).execute();
      return new Set(rows.map((row) => row.blob_key));
    },
  };

  async function deleteRuns(ids: readonly number[]): Promise<ArchivedRun[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .deleteFrom('test_runs')
      .where(inIds(dialect, 'id', ids))
      .returning(['id', 'project_id'])
      .execute();
    return rows.map((row) => ({ id: row.id, projectId: row.project_id }));
  }
}
