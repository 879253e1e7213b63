/** OAuth 2.0 tokens: an access token and its refresh token per grant, stored as hashes only. */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('oauth_tokens')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('access_hash', 'text', (c) => c.notNull().unique())
    .addColumn('refresh_hash', 'text', (c) => c.notNull().unique())
    .addColumn('access_expires_time', t.timestamp, (c) => c.notNull())
    .addColumn('refresh_expires_time', t.timestamp, (c) => c.notNull())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_tokens_user').on('oauth_tokens').column('user_id').execute();
}
