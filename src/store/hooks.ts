/**
 * The outbox of run-finished notifications, delivered with retries by the server: the run's
 * `hookURL`, and the deliveries notification subscriptions ask for (store/notifications.ts).
 */
import type { Kysely } from 'kysely';
import type { Tables } from './schema.ts';

export interface HookDelivery {
  readonly id: number;
  readonly testRunId: number;
  /** The URL, or the e-mail address of an EMAIL delivery. */
  readonly url: string;
  readonly attempts: number;
  /** WEBHOOK (a form POST), SLACK or EMAIL. */
  readonly channel: string;
}

export type HooksStore = ReturnType<typeof hooksStore>;

export function hooksStore(db: Kysely<Tables>) {
  return {
    async enqueue(testRunId: number, url: string, now: number): Promise<void> {
      await db
        .insertInto('hook_deliveries')
        .values({ test_run_id: testRunId, url, status: 'PENDING', next_attempt_time: now, create_time: now })
        .execute();
    },

    async due(now: number, limit = 20): Promise<HookDelivery[]> {
      const rows = await db
        .selectFrom('hook_deliveries')
        .select(['id', 'test_run_id', 'url', 'attempts', 'channel'])
        .where('status', '=', 'PENDING')
        .where('next_attempt_time', '<=', now)
        .orderBy('next_attempt_time')
        .limit(limit)
        .execute();
      return rows.map((row) => ({
        id: row.id,
        testRunId: row.test_run_id,
        url: row.url,
        attempts: row.attempts,
        channel: row.channel,
      }));
    },

    /** Takes a due delivery for one attempt, so two servers never send it at once. */
    async take(id: number, attempts: number, retryAt: number): Promise<boolean> {
      const result = await db
        .updateTable('hook_deliveries')
        .set({ attempts: attempts + 1, next_attempt_time: retryAt })
        .where('id', '=', id)
        .where('attempts', '=', attempts)
        .where('status', '=', 'PENDING')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async settle(id: number, status: 'DELIVERED' | 'FAILED' | 'PENDING', error: string | null): Promise<void> {
      await db.updateTable('hook_deliveries').set({ status, last_error: error }).where('id', '=', id).execute();
    },

    async ofRun(testRunId: number): Promise<Array<{ status: string; attempts: number; lastError: string | null }>> {
      const rows = await db
        .selectFrom('hook_deliveries')
        .select(['status', 'attempts', 'last_error'])
        .where('test_run_id', '=', testRunId)
        .orderBy('id')
        .execute();
      return rows.map((row) => ({ status: row.status, attempts: row.attempts, lastError: row.last_error }));
    },
  };
}
