/** OAuth 2.0 token pairs, by the SHA-256 of each token (the tokens themselves are never stored). */
import type { Kysely } from 'kysely';
import type { Tables } from './schema.ts';

export interface TokenPair {
  readonly id: number;
  readonly userId: number;
  readonly accessExpiresTime: number;
  readonly refreshExpiresTime: number;
}

export type OAuthTokensStore = ReturnType<typeof oauthTokensStore>;

export function oauthTokensStore(db: Kysely<Tables>) {
  const columns = ['id', 'user_id', 'access_expires_time', 'refresh_expires_time'] as const;
  const toPair = (row: { id: number; user_id: number; access_expires_time: number; refresh_expires_time: number }): TokenPair => ({
    id: row.id,
    userId: row.user_id,
    accessExpiresTime: row.access_expires_time,
    refreshExpiresTime: row.refresh_expires_time,
  });
  return {
    async insert(pair: { userId: number; accessHash: string; refreshHash: string; accessExpiresTime: number; refreshExpiresTime: number; now: number }): Promise<void> {
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

    async byAccessHash(hash: string): Promise<TokenPair | undefined> {
      const row = await db.selectFrom('oauth_tokens').select(columns).where('access_hash', '=', hash).executeTakeFirst();
      return row && toPair(row);
    },

    /** Takes the pair a refresh token belongs to out of use, returning it: a refresh token works once. */
    async takeByRefreshHash(hash: string): Promise<TokenPair | undefined> {
      const row = await db.deleteFrom('oauth_tokens').where('refresh_hash', '=', hash).returning(columns).executeTakeFirst();
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
