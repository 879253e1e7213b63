/**
 * Notification subscriptions, and the deliveries a finished run owes them: put in the outbox of
 * run-finished hooks (store/hooks.ts) in the statement that finds them.
 */
import { type Kysely, sql } from 'kysely';
import type { ListQuery } from '../domain/list-query.ts';
import type {
  NOTIFICATION_LIST,
  Notification,
  NotificationChannel,
  NotificationDraft,
  NotificationScope,
} from '../domain/notifications.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { type ListSql, listConditions, pageOf } from './sql.ts';

type NotificationField = keyof (typeof NOTIFICATION_LIST)['fields'];

const LIST_SQL: ListSql<NotificationField> = {
  columns: {
    id: 'n.id',
    channel: 'n.channel',
    destination: 'n.destination',
    scope: 'n.scope',
    projectId: 'n.project_id',
    createTime: 'n.create_time',
    projectName: 'p.name',
    userId: 'n.user_id',
    // A subscription is its owner's, who alone lists it.
    userEmail: '(SELECT u.email FROM users u WHERE u.id = n.user_id)',
  },
  searchColumns: ['n.destination', 'p.name'],
  tieBreaker: 'n.id',
};

/** A subscription with the name of its project (null for all projects). */
export interface NotificationRecord extends Notification {
  readonly projectName: string | null;
}

export type NotificationsStore = ReturnType<typeof notificationsStore>;

export function notificationsStore(db: Kysely<Tables>, dialect: Dialect) {
  const withProject = () => db.selectFrom('notifications as n').leftJoin('projects as p', 'p.id', 'n.project_id');
  return {
    async list(
      userId: number,
      query: ListQuery<NotificationField>,
    ): Promise<{ total: number; items: NotificationRecord[] }> {
      const conditions = listConditions(dialect, query, LIST_SQL);
      const base = withProject()
        .where('n.user_id', '=', userId)
        .where((eb) => eb.and(conditions));
      const { total, rows } = await pageOf(
        base,
        (q) => q.selectAll('n').select('p.name as project_name'),
        query,
        LIST_SQL,
      );
      return { total, items: rows.map(toRecord) };
    },

    /** The user's subscription, or undefined (someone else's is undefined too). */
    async find(userId: number, id: number): Promise<NotificationRecord | undefined> {
      const row = await withProject()
        .selectAll('n')
        .select('p.name as project_name')
        .where('n.id', '=', id)
        .where('n.user_id', '=', userId)
        .executeTakeFirst();
      return row && toRecord(row);
    },

    async insert(userId: number, draft: NotificationDraft, now: number): Promise<number> {
      const row = await db
        .insertInto('notifications')
        .values({
          user_id: userId,
          project_id: draft.projectId,
          channel: draft.channel,
          destination: draft.destination,
          scope: draft.scope,
          create_time: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    },

    async update(userId: number, id: number, draft: NotificationDraft): Promise<void> {
      await db
        .updateTable('notifications')
        .set({
          project_id: draft.projectId,
          channel: draft.channel,
          destination: draft.destination,
          scope: draft.scope,
        })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .execute();
    },

    async delete(userId: number, id: number): Promise<boolean> {
      const result = await db
        .deleteFrom('notifications')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /**
     * Queues a delivery for every subscription of the run's owner that covers the run's project and
     * one of `scopes`; answers how many. One statement, whatever the number of subscriptions.
     */
    async enqueueForRun(testRunId: number, scopes: readonly NotificationScope[], now: number): Promise<number> {
      const scopeList = sql.join(scopes.map((scope) => sql`${scope}`));
      const result = await sql`
        INSERT INTO hook_deliveries (test_run_id, url, status, next_attempt_time, create_time, channel, notification_id)
        SELECT r.id, n.destination, 'PENDING', ${now}, ${now}, n.channel, n.id
        FROM test_runs r
        JOIN notifications n ON n.user_id = r.user_id AND (n.project_id IS NULL OR n.project_id = r.project_id)
        WHERE r.id = ${testRunId} AND n.scope IN (${scopeList})`.execute(db);
      return Number(result.numAffectedRows ?? 0);
    },
  };
}

function toRecord(row: {
  id: number;
  user_id: number;
  project_id: number | null;
  channel: string;
  destination: string;
  scope: string;
  create_time: number;
  project_name: string | null;
}): NotificationRecord {
  return {
    id: Number(row.id),
    userId: Number(row.user_id),
    projectId: row.project_id === null ? null : Number(row.project_id),
    channel: row.channel as NotificationChannel,
    destination: row.destination,
    scope: row.scope as NotificationScope,
    createTime: Number(row.create_time),
    projectName: row.project_name,
  };
}
