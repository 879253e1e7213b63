/**
 * Storage quotas and password guesses.
 *
 * `storage_usage` holds each account's bytes of files and its operator's quota override. The bytes
 * are kept by triggers on `files`, in the statement that adds or removes the file: files go away
 * by many paths (a user's delete, an artifact replaced, retention's batches, and cascades from
 * runs, projects and users), and a trigger sees every one of them, in the same transaction, so no
 * path can forget it and a crash leaves no drift. Summing `files` on each upload was measured and
 * not chosen: 16 ms on PostgreSQL for 90,000 files of one user even with a covering index
 * (docs/security.md), against one row read.
 *
 * `password_guesses` holds the recent failed sign-ins per account (services/password-guesses.ts).
 */
import { type Kysely, sql } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export async function up(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('storage_usage')
    .addColumn('user_id', t.id, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('used_bytes', t.timestamp, (c) => c.notNull().defaultTo(0))
    .addColumn('quota_bytes', t.timestamp)
    .execute();

  if (t.dialect === 'sqlite') {
    await sql`CREATE TRIGGER files_usage_insert AFTER INSERT ON files BEGIN
      INSERT INTO storage_usage (user_id, used_bytes) VALUES (NEW.user_id, NEW.size)
        ON CONFLICT (user_id) DO UPDATE SET used_bytes = storage_usage.used_bytes + excluded.used_bytes;
    END`.execute(db);
    await sql`CREATE TRIGGER files_usage_delete AFTER DELETE ON files BEGIN
      UPDATE storage_usage SET used_bytes = used_bytes - OLD.size WHERE user_id = OLD.user_id;
    END`.execute(db);
    await sql`CREATE TRIGGER files_usage_update AFTER UPDATE OF size, user_id ON files BEGIN
      UPDATE storage_usage SET used_bytes = used_bytes - OLD.size WHERE user_id = OLD.user_id;
      INSERT INTO storage_usage (user_id, used_bytes) VALUES (NEW.user_id, NEW.size)
        ON CONFLICT (user_id) DO UPDATE SET used_bytes = storage_usage.used_bytes + excluded.used_bytes;
    END`.execute(db);
  } else {
    // Created in the schema the connection works in (search_path), like the tables. Statement
    // triggers with transition tables: a statement removing thousands of one user's files updates
    // the user's row once, not once per file (245 ms → a few for 3,000 files, measured).
    await sql`CREATE FUNCTION files_usage_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO storage_usage (user_id, used_bytes) SELECT user_id, SUM(size) FROM new_files GROUP BY user_id
        ON CONFLICT (user_id) DO UPDATE SET used_bytes = storage_usage.used_bytes + EXCLUDED.used_bytes;
      RETURN NULL;
    END $$`.execute(db);
    // The rows are locked in user order first: two retention passes removing files of the same
    // users at once (several servers) then wait for each other instead of deadlocking.
    await sql`CREATE FUNCTION files_usage_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM storage_usage WHERE user_id IN (SELECT user_id FROM old_files) ORDER BY user_id FOR UPDATE;
      UPDATE storage_usage SET used_bytes = storage_usage.used_bytes - gone.bytes
        FROM (SELECT user_id, SUM(size) AS bytes FROM old_files GROUP BY user_id) AS gone
        WHERE storage_usage.user_id = gone.user_id;
      RETURN NULL;
    END $$`.execute(db);
    // Files are never updated in size or owner today; counted all the same, so no future code drifts.
    await sql`CREATE FUNCTION files_usage_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE storage_usage SET used_bytes = used_bytes - OLD.size WHERE user_id = OLD.user_id;
      INSERT INTO storage_usage (user_id, used_bytes) VALUES (NEW.user_id, NEW.size)
        ON CONFLICT (user_id) DO UPDATE SET used_bytes = storage_usage.used_bytes + EXCLUDED.used_bytes;
      RETURN NULL;
    END $$`.execute(db);
    await sql`CREATE TRIGGER files_usage_insert AFTER INSERT ON files REFERENCING NEW TABLE AS new_files
      FOR EACH STATEMENT EXECUTE FUNCTION files_usage_inserted()`.execute(db);
    await sql`CREATE TRIGGER files_usage_delete AFTER DELETE ON files REFERENCING OLD TABLE AS old_files
      FOR EACH STATEMENT EXECUTE FUNCTION files_usage_deleted()`.execute(db);
    await sql`CREATE TRIGGER files_usage_update AFTER UPDATE OF size, user_id ON files
      FOR EACH ROW EXECUTE FUNCTION files_usage_updated()`.execute(db);
  }
  // What is stored already counts from the start.
  await sql`INSERT INTO storage_usage (user_id, used_bytes) SELECT user_id, SUM(size) FROM files GROUP BY user_id`.execute(
    db,
  );

  await db.schema
    .createTable('password_guesses')
    .addColumn('id', t.id, (c) => t.primaryKey(c))
    .addColumn('account_key', 'text', (c) => c.notNull())
    .addColumn('time', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('password_guesses_account_time')
    .on('password_guesses')
    .columns(['account_key', 'time'])
    .execute();
  await db.schema.createIndex('password_guesses_time').on('password_guesses').column('time').execute();
}
