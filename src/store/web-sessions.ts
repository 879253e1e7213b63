/** Dashboard sign-in sessions, by the SHA-256 of their cookie token. */
import type { Kysely } from 'kysely';
import type { User } from '../domain/users.ts';
import type { Tables } from './schema.ts';
import { toUser } from './users.ts';

export interface WebSession {
  readonly userId: number;
  readonly csrfToken: string;
  readonly expiresTime: number;
}

export type WebSessionsStore = ReturnType<typeof webSessionsStore>;

export function webSessionsStore(db: Kysely<Tables>) {
  return {
    async insert(session: WebSession & { tokenHash: string; now: number }): Promise<void> {
      await db
        .insertInto('web_sessions')
        .values({
          user_id: session.userId,
          token_hash: session.tokenHash,
          csrf_token: session.csrfToken,
          create_time: session.now,
          expires_time: session.expiresTime,
          auth_time: session.now,
        })
        .execute();
    },

    /** The signed-in user of a session token, with the session: one statement per request. */
    async userByTokenHash(
      hash: string,
    ): Promise<{ user: User; csrfToken: string; expiresTime: number; authTime: number } | undefined> {
      const row = await db
        .selectFrom('web_sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .selectAll('u')
        .select(['s.csrf_token', 's.expires_time', 's.auth_time'])
        .where('s.token_hash', '=', hash)
        .executeTakeFirst();
      return (
        row && { user: toUser(row), csrfToken: row.csrf_token, expiresTime: row.expires_time, authTime: row.auth_time }
      );
    },

    /** The password was entered again in this session. */
    async markAuthenticated(hash: string, now: number): Promise<void> {
      await db
        .updateTable('web_sessions')
        .set({ auth_time: now, confirm_failures: 0 })
        .where('token_hash', '=', hash)
        .execute();
    },

    /** A wrong password was given to confirm the sign-in: how many so far. */
    async countConfirmFailure(hash: string): Promise<number> {
      const row = await db
        .updateTable('web_sessions')
        .set((eb) => ({ confirm_failures: eb('confirm_failures', '+', 1) }))
        .where('token_hash', '=', hash)
        .returning('confirm_failures')
        .executeTakeFirst();
      return row?.confirm_failures ?? Number.MAX_SAFE_INTEGER;
    },

    async delete(hash: string): Promise<void> {
      await db.deleteFrom('web_sessions').where('token_hash', '=', hash).execute();
    },

    /** Every session of the user ends, but the one whose token hash is `except` (the one acting). */
    async revokeAllOf(userId: number, except?: string): Promise<void> {
      let query = db.deleteFrom('web_sessions').where('user_id', '=', userId);
      if (except !== undefined) query = query.where('token_hash', '!=', except);
      await query.execute();
    },

    async deleteExpired(now: number): Promise<void> {
      await db.deleteFrom('web_sessions').where('expires_time', '<', now).execute();
    },
  };
}
