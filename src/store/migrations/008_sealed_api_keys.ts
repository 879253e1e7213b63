/**
 * API keys leave the database: each user's key is sealed (AES-256-GCM, services/secret-box.ts, whose
 * sealer the caller passes) with the key ring the server was started with, and the plain `api_key` column is dropped; the
 * lookup hash stays. Dashboard sessions learn when their password was last entered (revealing a
 * key needs a recent one) and how often a wrong one was given there. On SQLite, the deleted text is overwritten (secure_delete), and the
 * runner truncates the write-ahead log afterwards, so the old keys do not linger in the file.
 */
import { type Kysely, sql } from 'kysely';
import type { ColumnTypes } from './column-types.ts';

export interface MigrationSecrets {
  /**
   * Seals a user's API key with the current key (services/secret-box.ts: apiKeySealer). Needed
   * only when there are keys to seal (an empty database migrates without it).
   */
  readonly sealApiKey?: (userId: number, apiKey: string) => { readonly keyId: string; readonly ciphertext: string };
  /** Seals a run's secrets (JSON) with the current key, for 010 (services/secret-box.ts: migrationSealers). */
  readonly sealRunSecrets?: (
    testRunId: number,
    secrets: string,
  ) => { readonly keyId: string; readonly ciphertext: string };
}

export async function up(db: Kysely<unknown>, t: ColumnTypes, secrets: MigrationSecrets): Promise<void> {
  // SQLite overwrites what is deleted only with secure_delete, a setting of the connection: on for
  // this step, then back as it was (retention deletes much; zeroing it all is not needed).
  const secureDelete =
    t.dialect === 'sqlite'
      ? (await sql<{ secure_delete: number }>`PRAGMA secure_delete`.execute(db)).rows[0]?.secure_delete
      : undefined;
  if (t.dialect === 'sqlite') await sql`PRAGMA secure_delete = ON`.execute(db);
  await db.schema.alterTable('users').addColumn('api_key_sealed', 'text').execute();
  await db.schema.alterTable('users').addColumn('api_key_key_id', 'text').execute();

  const users = db as unknown as Kysely<{
    users: { id: number; api_key: string; api_key_sealed: string | null; api_key_key_id: string | null };
  }>;
  const rows = await users.selectFrom('users').select(['id', 'api_key']).orderBy('id').execute();
  if (rows.length > 0 && secrets.sealApiKey === undefined) {
    throw new Error('sealing the API keys needs the API key encryption key, and none was given');
  }
  for (const row of rows) {
    const sealed = secrets.sealApiKey!(row.id, row.api_key);
    await users
      .updateTable('users')
      .set({ api_key_sealed: sealed.ciphertext, api_key_key_id: sealed.keyId })
      .where('id', '=', row.id)
      .execute();
  }
  await db.schema.alterTable('users').dropColumn('api_key').execute();

  await db.schema
    .alterTable('web_sessions')
    .addColumn('auth_time', t.timestamp, (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`UPDATE web_sessions SET auth_time = create_time`.execute(db);
  await db.schema
    .alterTable('web_sessions')
    .addColumn('confirm_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  if (secureDelete !== undefined) await sql.raw(`PRAGMA secure_delete = ${Number(secureDelete)}`).execute(db);
}
