/** Sign-in sessions of the web dashboard (a cookie holds the token; only its hash is stored). */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('web_sessions')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .addColumn('expires_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_sessions_user').on('web_sessions').column('user_id').execute();
}
