/** OAuth 2.0 token pairs, by the SHA-256 of each token (the tokens themselves are never stored). */
import type { Kysely } from 'kysely';
import type { User } from '../domain/users.ts';
import type { Tables } from './schema.ts';
import { toUser } from './users.ts';

export interface TokenPair {
  readonly id: number;
  readonly userId: number;
  readonly accessExpiresTime: number;
  readonly refreshExpiresTime: number;
}

export type OAuthTokensStore = ReturnType<typeof oauthTokensStore>;

export function oauthTokensStore(db: Kysely<Tables>) {
  const columns = ['id', 'user_id', 'access_expires_time', 'refresh_expires_time'] as const;
  const toPair = (row: {
    id: number;
    user_id: number;
    access_expires_time: number;
    refresh_expires_time: number;
  }): TokenPair => ({
    id: row.id,
    userId: row.user_id,
    accessExpiresTime: row.access_expires_time,
    refreshExpiresTime: row.refresh_expires_time,
  });
  return {
    async insert(pair: {
      userId: number;
      accessHash: string;
      refreshHash: string;
      accessExpiresTime: number;
      refreshExpiresTime: number;
      now: number;
    }): Promise<void> {
      await db
        .insertInto('oauth_tokens')
        .values({
          user_id: pair.userId,
          access_hash: pair.accessHash,
          refresh_hash: pair.refreshHash,
          access_expires_time: pair.accessExpiresTime,
          refresh_expires_time: pair.refreshExpiresTime,
          create_time: pair.now,
        })
        .execute();
    },

    /** The user an access token stands for, and until when it works: one statement per authenticated request. */
    async userByAccessHash(hash: string): Promise<{ user: User; accessExpiresTime: number } | undefined> {
      const row = await db
        .selectFrom('oauth_tokens as t')
        .innerJoin('users as u', 'u.id', 't.user_id')
        .selectAll('u')
        .select('t.access_expires_time')
        .where('t.access_hash', '=', hash)
        .executeTakeFirst();
      return row && { user: toUser(row), accessExpiresTime: row.access_expires_time };
    },

    /** Takes the pair a refresh token belongs to out of use, returning it: a refresh token works once. */
    async takeByRefreshHash(hash: string): Promise<TokenPair | undefined> {
      const row = await db
        .deleteFrom('oauth_tokens')
        .where('refresh_hash', '=', hash)
        .returning(columns)
        .executeTakeFirst();
      return row && toPair(row);
    },

    /** Every token of the user stops working (password change, key reset). */
    async revokeAllOf(userId: number): Promise<void> {
      await db.deleteFrom('oauth_tokens').where('user_id', '=', userId).execute();
    },

    /** Pairs whose refresh token expired are of no use to anyone. */
    async deleteExpired(now: number): Promise<void> {
      await db.deleteFrom('oauth_tokens').where('refresh_expires_time', '<', now).execute();
    },
  };
}
