/** Dashboard sign-in sessions, by the SHA-256 of their cookie token. */
import type { Kysely } from 'kysely';
import type { Tables } from './schema.ts';

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
        .values({ user_id: session.userId, token_hash: session.tokenHash, csrf_token: session.csrfToken, create_time: session.now, expires_time: session.expiresTime })
        .execute();
    },

    async byTokenHash(hash: string): Promise<WebSession | undefined> {
      const row = await db.selectFrom('web_sessions').select(['user_id', 'csrf_token', 'expires_time']).where('token_hash', '=', hash).executeTakeFirst();
      return row && { userId: row.user_id, csrfToken: row.csrf_token, expiresTime: row.expires_time };
    },

    async delete(hash: string): Promise<void> {
      await db.deleteFrom('web_sessions').where('token_hash', '=', hash).execute();
    },

    async revokeAllOf(userId: number): Promise<void> {
      await db.deleteFrom('web_sessions').where('user_id', '=', userId).execute();
    },

    async deleteExpired(now: number): Promise<void> {
      await db.deleteFrom('web_sessions').where('expires_time', '<', now).execute();
    },
  };
}
