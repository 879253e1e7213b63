/**
 * The account pages (docs/api.md#account-pages): notification subscriptions, each user's
 * preferences, and a channel on the outbox of run-finished deliveries so that one outbox, with its
 * retries, carries hookURL posts, webhook, Slack and e-mail notifications alike. Existing rows are
 * hookURL posts (`WEBHOOK`, the form they always were).
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('notifications')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', t.id, (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notifications_user').on('notifications').columns(['user_id', 'id']).execute();
  await db.schema
    .createTable('user_preferences')
    .addColumn('user_id', t.id, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('test_timeout', 'integer')
    .execute();
  await db.schema
    .alterTable('hook_deliveries')
    .addColumn('channel', 'text', (c) => c.notNull().defaultTo('WEBHOOK'))
    .execute();
  // A deleted subscription takes its pending deliveries with it.
  await db.schema
    .alterTable('hook_deliveries')
    .addColumn('notification_id', t.id, (c) => c.references('notifications.id').onDelete('cascade'))
    .execute();
}
