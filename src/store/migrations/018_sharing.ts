/**
 * Sharing (docs/api.md#sharing): a user's access groups with their members, and what is shared
 * with another user or with an access group. A share names its project, device group or file by
 * a column of its own with a foreign key, so that deleting the record (or the user, or the group)
 * takes its shares with it and no share outlives what it opens.
 */
import type { Kysely } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('access_groups')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('access_groups_user').on('access_groups').column('user_id').execute();

  await db.schema
    .createTable('access_group_users')
    .addColumn('access_group_id', t.id, (c) => c.notNull().references('access_groups.id').onDelete('cascade'))
    .addColumn('user_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('access_group_users_pk', ['access_group_id', 'user_id'])
    .execute();
  // Visibility asks "which groups is this user in" on every read of a shared record.
  await db.schema.createIndex('access_group_users_user').on('access_group_users').column('user_id').execute();

  await db.schema
    .createTable('shares')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('owner_id', t.id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', t.id, (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('device_group_id', t.id, (c) => c.references('device_groups.id').onDelete('cascade'))
    .addColumn('file_id', t.id, (c) => c.references('files.id').onDelete('cascade'))
    .addColumn('user_id', t.id, (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('access_group_id', t.id, (c) => c.references('access_groups.id').onDelete('cascade'))
    .addColumn('create_time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('shares_user').on('shares').column('user_id').execute();
  await db.schema.createIndex('shares_access_group').on('shares').column('access_group_id').execute();
  await db.schema.createIndex('shares_project').on('shares').column('project_id').execute();
  await db.schema.createIndex('shares_device_group').on('shares').column('device_group_id').execute();
  await db.schema.createIndex('shares_file').on('shares').column('file_id').execute();
}
