/**
 * Failed sign-ins per account, for the sliding window of services/password-guesses.ts: one row per
 * guess with its time. Rows older than the window are pruned for the account on each attempt and
 * for every account by the retention job, so the table holds at most the guesses of one window.
 */
import { type Kysely, sql } from 'kysely';
import type { Tables } from './schema.ts';

export type PasswordGuessesStore = ReturnType<typeof passwordGuessesStore>;

export function passwordGuessesStore(db: Kysely<Tables>) {
  return {
    async record(accountKey: string, time: number): Promise<number> {
      const row = await db
        .insertInto('password_guesses')
        .values({ account_key: accountKey, time })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** Guesses at `since` or later, and the oldest of them (when the window next frees a place). */
    async since(accountKey: string, since: number): Promise<{ count: number; oldest: number | null }> {
      const row = await db
        .selectFrom('password_guesses')
        .select([sql<number | string>`COUNT(*)`.as('count'), sql<number | string | null>`MIN(time)`.as('oldest')])
        .where('account_key', '=', accountKey)
        .where('time', '>=', since)
        .executeTakeFirstOrThrow();
      return { count: Number(row.count), oldest: row.oldest === null ? null : Number(row.oldest) };
    },

    async forget(id: number): Promise<void> {
      await db.deleteFrom('password_guesses').where('id', '=', id).execute();
    },

    async pruneAccount(accountKey: string, before: number): Promise<void> {
      await db
        .deleteFrom('password_guesses')
        .where('account_key', '=', accountKey)
        .where('time', '<', before)
        .execute();
    },

    /** Answers how many were removed. */
    async pruneAll(before: number): Promise<number> {
      const result = await db.deleteFrom('password_guesses').where('time', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
