/**
 * A run's secrets leave its settings: the passwords a run hands the device (the crawler's
 * application password, the Google account's) move from `test_runs.config_json` into
 * `test_run_secrets`, sealed like API keys (by the caller's sealer, services/secret-box.ts, authenticated with the run's
 * id), and the settings they leave are written as version 1 (domain/run-settings.ts). Rows that
 * held no password stay as they were: they read as version 0. Deleted text is overwritten on
 * SQLite (secure_delete) and the runner truncates the write-ahead log afterwards, as for 008.
 */
import { type Kysely, sql } from 'kysely';
import type { ColumnTypes } from './column-types.ts';
import type { MigrationSecrets } from './008_sealed_api_keys.ts';

/** The fields as this step found and left them: written out here, so later versions do not change what it does. */
const PASSWORDS = ['applicationPassword', 'googleAccountPassword'] as const;

export async function up(db: Kysely<unknown>, t: ColumnTypes, secrets: MigrationSecrets): Promise<void> {
  const secureDelete =
    t.dialect === 'sqlite'
      ? (await sql<{ secure_delete: number }>`PRAGMA secure_delete`.execute(db)).rows[0]?.secure_delete
      : undefined;
  if (t.dialect === 'sqlite') await sql`PRAGMA secure_delete = ON`.execute(db);
  await db.schema
    .createTable('test_run_secrets')
    .addColumn('test_run_id', t.id, (c) => c.primaryKey().references('test_runs.id').onDelete('cascade'))
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .execute();
  // Rotation pages through the rows of keys other than the current one.
  await db.schema
    .createIndex('test_run_secrets_key_id')
    .on('test_run_secrets')
    .columns(['key_id', 'test_run_id'])
    .execute();

  const runs = db as unknown as Kysely<{
    test_runs: { id: number; config_json: string };
    test_run_secrets: { test_run_id: number; sealed: string; key_id: string };
  }>;
  // A password is a JSON string after its name; null ones (most rows) are not worth rewriting.
  const rows = await runs
    .selectFrom('test_runs')
    .select(['id', 'config_json'])
    .where((eb) => eb.or(PASSWORDS.map((name) => eb('config_json', 'like', `%"${name}":"%`))))
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const {
      [PASSWORDS[0]]: applicationPassword = null,
      [PASSWORDS[1]]: googleAccountPassword = null,
      ...settings
    } = JSON.parse(row.config_json) as Record<string, unknown>;
    if (applicationPassword === null && googleAccountPassword === null) continue;
    if (secrets.sealRunSecrets === undefined)
      throw new Error('sealing the passwords of test runs needs the API key encryption key, and none was given');
    const sealed = secrets.sealRunSecrets(row.id, JSON.stringify({ v: 1, applicationPassword, googleAccountPassword }));
    await runs
      .insertInto('test_run_secrets')
      .values({ test_run_id: row.id, sealed: sealed.ciphertext, key_id: sealed.keyId })
      .execute();
    await runs
      .updateTable('test_runs')
      .set({ config_json: JSON.stringify({ v: 1, ...settings }) })
      .where('id', '=', row.id)
      .execute();
  }
  if (secureDelete !== undefined) await sql.raw(`PRAGMA secure_delete = ${Number(secureDelete)}`).execute(db);
}
