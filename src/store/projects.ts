/** The projects table, with the per-project figures the API shows next to each project. */
import { type Kysely, type Selectable, type Updateable, sql } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import type { PROJECT_LIST } from '../domain/projects.ts';
import type {
  ArchivingStrategy,
  NewProject,
  OsType,
  Project,
  ProjectChanges,
  ProjectType,
} from '../domain/projects.ts';
import { currentDeviceRunText, isCurrentDeviceRun } from './current-device-runs.ts';
import type { Dialect } from './db.ts';
import type { ProjectsTable, Tables } from './schema.ts';
import { sharedWith } from './sharing.ts';
import { prepared } from './prepared.ts';
import { type ListSql, idsParameter, inIdsParameter, listConditions, pageOf } from './sql.ts';

type ProjectField = keyof (typeof PROJECT_LIST)['fields'];

/** The owner's e-mail, as the record's `userEmail` shows it. */
const OWNER_EMAIL_SQL = '(SELECT u.email FROM users u WHERE u.id = projects.user_id)';

/**
 * The listing's fields as SQL, seen from the caller: the sharing flags depend on who asks, and the
 * figures are those `figures` gives (a shared project's figures are the project's, as shown to its
 * sharees). Every subquery is keyed by the listed project's id, so it never reaches another
 * project's rows.
 */
function listSql(userId: number): ListSql<ProjectField> {
  const foreign = sql`projects.user_id <> ${userId}`;
  return {
    columns: {
      id: 'id',
      name: 'name',
      description: 'description',
      type: 'type',
      osType: 'os_type',
      createTime: 'create_time',
      archiveTime: 'archive_time',
      archivingStrategy: 'archiving_strategy',
      archivingItemCount: 'archiving_item_count',
      common: 'common',
      shared: sql`(CASE WHEN projects.shared = 1 OR ${foreign} THEN 1 ELSE 0 END)`,
      sharedWithCaller: sql`(CASE WHEN ${foreign} THEN 1 ELSE 0 END)`,
      sharedById: sql`(CASE WHEN ${foreign} THEN projects.user_id END)`,
      sharedByEmail: sql`(CASE WHEN ${foreign} THEN ${sql.raw(OWNER_EMAIL_SQL)} END)`,
      readOnly: 'read_only',
      successRatio: `(SELECT COALESCE(SUM(CASE WHEN d.state = 'SUCCEEDED' THEN 1 ELSE 0 END) * 1.0 / NULLIF(COUNT(*), 0), 0)
        FROM device_runs d WHERE d.project_id = projects.id AND d.state <> 'EXCLUDED' AND ${currentDeviceRunText('d')})`,
      userId: 'user_id',
      userEmail: OWNER_EMAIL_SQL,
      testRunCount: '(SELECT COUNT(*) FROM test_runs t WHERE t.project_id = projects.id)',
    },
    searchColumns: ['name', 'description'],
    tieBreaker: 'id',
  };
}

export interface ProjectFigures {
  readonly testRunCount: number;
  /** Succeeded device runs over all device runs of the project, 0..1. */
  readonly successRatio: number;
}

export type ProjectsStore = ReturnType<typeof projectsStore>;

export function projectsStore(db: Kysely<Tables>, dialect: Dialect) {
  // Every read of a project, and of anything in it, runs the first; every project shown, the others.
  const readable = prepared(db, 2, (userId: number, id: number) =>
    db
      .selectFrom('projects')
      .selectAll()
      .select(OWNER_EMAIL)
      .where('id', '=', id)
      .where((eb) => eb.or([eb('user_id', '=', userId), eb('id', 'in', sharedWith(db, 'project_id', userId))])),
  );
  const runCountsOf = prepared(db, 1, (ids: unknown) =>
    db
      .selectFrom('test_runs')
      .select(['project_id', (eb) => eb.fn.countAll<number>().as('count')])
      .where(inIdsParameter(dialect, 'project_id', ids))
      .groupBy('project_id'),
  );
  const outcomesOf = prepared(db, 1, (ids: unknown) =>
    db
      .selectFrom('device_runs')
      .select([
        'project_id',
        (eb) => eb.fn.countAll<number>().as('all'),
        sql<number>`SUM(CASE WHEN state = 'SUCCEEDED' THEN 1 ELSE 0 END)`.as('succeeded'),
      ])
      .where(inIdsParameter(dialect, 'project_id', ids))
      .where('state', '<>', 'EXCLUDED')
      .where(isCurrentDeviceRun())
      .groupBy('project_id'),
  );
  return {
    async insert(userId: number, project: NewProject, now: number, archivingItemCount: number): Promise<Project> {
      const row = await db
        .insertInto('projects')
        .values({
          user_id: userId,
          name: project.name,
          description: project.description,
          type: project.type,
          os_type: 'UNDEFINED',
          create_time: now,
          archiving_strategy: 'DAYS',
          archiving_item_count: archivingItemCount,
          common: 0,
          shared: 0,
          read_only: 0,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toProject(row);
    },

    /** The project if it exists and belongs to the user. */
    /** Clears archiveTime; the retention job's clock for an unused project restarts now (docs/api.md#retention). */
    async unarchive(id: number, now: number): Promise<void> {
      await db.updateTable('projects').set({ archive_time: null, unarchive_time: now }).where('id', '=', id).execute();
    },

    async findOwned(userId: number, id: number): Promise<Project | undefined> {
      const row = await db
        .selectFrom('projects')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row && toProject(row);
    },

    /**
     * The project if the user may read it: theirs, or shared with them (docs/api.md#sharing). A
     * shared one carries its owner's e-mail.
     */
    async findReadable(userId: number, id: number): Promise<Project | undefined> {
      const [row] = await readable(userId, id);
      return row && toProject(row);
    },

    /** The user's oldest project of that exact name (names may repeat). */
    async findByName(userId: number, name: string): Promise<Project | undefined> {
      const row = await db
        .selectFrom('projects')
        .selectAll()
        .where('user_id', '=', userId)
        .where('name', '=', name)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      return row && toProject(row);
    },

    /** Locks the project row until the transaction ends (PostgreSQL); SQLite's write lock covers it. */
    async lockOwned(userId: number, id: number): Promise<Project | undefined> {
      let query = db.selectFrom('projects').selectAll().where('id', '=', id).where('user_id', '=', userId);
      if (dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      return row && toProject(row);
    },

    async update(id: number, changes: ProjectChanges): Promise<void> {
      const set: Updateable<ProjectsTable> = {};
      if (changes.name !== undefined) set.name = changes.name;
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.archivingStrategy !== undefined) set.archiving_strategy = changes.archivingStrategy;
      if (changes.archivingItemCount !== undefined) set.archiving_item_count = changes.archivingItemCount;
      if (Object.keys(set).length > 0) await db.updateTable('projects').set(set).where('id', '=', id).execute();
    },

    async setShared(id: number, shared: boolean): Promise<void> {
      await db
        .updateTable('projects')
        .set({ shared: shared ? 1 : 0 })
        .where('id', '=', id)
        .execute();
    },

    async setOsType(id: number, osType: OsType): Promise<void> {
      await db.updateTable('projects').set({ os_type: osType }).where('id', '=', id).execute();
    },

    async delete(id: number): Promise<void> {
      await db.deleteFrom('projects').where('id', '=', id).execute();
    },

    /** The user's projects and those shared with them (docs/api.md#sharing). */
    async list(userId: number, query: ListQuery<ProjectField>): Promise<{ total: number; items: Project[] }> {
      const spec = listSql(userId);
      const conditions = listConditions(dialect, query, spec);
      const base = db
        .selectFrom('projects')
        .where((eb) => eb.or([eb('user_id', '=', userId), eb('id', 'in', sharedWith(db, 'project_id', userId))]))
        .where((eb) => eb.and(conditions));
      const { total, rows } = await pageOf(base, (q) => q.selectAll().select(OWNER_EMAIL), query, spec);
      return { total, items: rows.map(toProject) };
    },

    /** Run counts and success ratios of several projects, in two statements. */
    async figures(projectIds: readonly number[]): Promise<Map<number, ProjectFigures>> {
      const figures = new Map<number, ProjectFigures>();
      if (projectIds.length === 0) return figures;
      const ids = idsParameter(dialect, projectIds);
      const runCounts = await runCountsOf(ids);
      const outcomes = await outcomesOf(ids);
      const runsByProject = new Map(runCounts.map((row) => [row.project_id, Number(row.count)]));
      const outcomesByProject = new Map(outcomes.map((row) => [row.project_id, row]));
      for (const id of projectIds) {
        const outcome = outcomesByProject.get(id);
        const all = Number(outcome?.all ?? 0);
        figures.set(id, {
          testRunCount: runsByProject.get(id) ?? 0,
          successRatio: all === 0 ? 0 : Number(outcome?.succeeded ?? 0) / all,
        });
      }
      return figures;
    },
  };
}

/** The owner's e-mail, for the record's `userEmail` and `sharedByEmail` when the reader is a sharee. */
const OWNER_EMAIL = sql<string>`${sql.raw(OWNER_EMAIL_SQL)}`.as('owner_email');

function toProject(row: Selectable<ProjectsTable> & { owner_email?: string }): Project {
  return {
    ...(row.owner_email === undefined ? {} : { ownerEmail: row.owner_email }),
    id: row.id,
    userId: row.user_id,
    name: row.name,
    description: row.description,
    type: row.type as ProjectType,
    osType: row.os_type as OsType,
    createTime: row.create_time,
    archiveTime: row.archive_time,
    archivingStrategy: row.archiving_strategy as ArchivingStrategy,
    archivingItemCount: row.archiving_item_count,
    common: row.common === 1,
    shared: row.shared === 1,
    readOnly: row.read_only === 1,
  };
}
