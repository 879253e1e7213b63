/** Each user's preferences (domain/preferences.ts): a row only once something was changed. */
import type { Kysely } from 'kysely';
import type { Tables } from './schema.ts';

export type PreferencesStore = ReturnType<typeof preferencesStore>;

export function preferencesStore(db: Kysely<Tables>) {
  return {
    /** The run timeout the user chose, seconds; null: the default. */
    async testTimeoutOf(userId: number): Promise<number | null> {
      const row = await db
        .selectFrom('user_preferences')
        .select('test_timeout')
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row?.test_timeout ?? null;
    },

    async setTestTimeout(userId: number, seconds: number | null): Promise<void> {
      await db
        .insertInto('user_preferences')
        .values({ user_id: userId, test_timeout: seconds })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ test_timeout: seconds }))
        .execute();
    },
  };
}
