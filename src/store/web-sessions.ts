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
        .values({ user_id: session.userId, token_hash: session.tokenHash, csrf_token: session.csrfToken, create_time: session.now, expires_time: session.expiresTime })
        .execute();
    },

    /** The signed-in user of a session token, with the session: one statement per request. */
    async userByTokenHash(hash: string): Promise<{ user: User; csrfToken: string; expiresTime: number } | undefined> {
      const row = await db
        .selectFrom('web_sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .selectAll('u')
        .select(['s.csrf_token', 's.expires_time'])
        .where('s.token_hash', '=', hash)
        .executeTakeFirst();
      return row && { user: toUser(row), csrfToken: row.csrf_token, expiresTime: row.expires_time };
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
