import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiKeyHash, generateApiKey } from '../../src/services/credentials.ts';
import { apiKeyAssociatedData, apiKeySealer, fixedKeyRing, generateSecretKey, open as unseal } from '../../src/services/secret-box.ts';
import { openDatabase } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';

const open = (engine: string, schema: string, sqliteFile = ':memory:') =>
  openDatabase({ databaseUrl: engine === 'postgres' ? POSTGRES_URL : undefined, sqliteFile, pgSchema: schema, pgPoolSize: 4 });

describe.each(ENGINES)('migrations (%s)', (engine) => {
  const schema = () => `${process.env.DEVICECLOUD_TEST_SCHEMA_PREFIX ?? 'dct_'}${randomBytes(6).toString('hex')}`;

  it('applies every step once, however often and however concurrently they are run', async () => {
    const name = schema();
    const databases = await Promise.all([open(engine, name), open(engine, name), open(engine, name)]);
    try {
      // Three servers starting together on PostgreSQL; on SQLite, one process migrating three times.
      if (engine === 'postgres') await Promise.all(databases.map((database) => migrate(database)));
      else await migrate(databases[0]!);
      await migrate(databases[0]!);
      const db = databases[0]!.db as any;
      const rows = await db.selectFrom('kysely_migration').select('name').orderBy('name').execute();
      expect(rows.map((row: { name: string }) => row.name)).toEqual(['001_core', '002_runs_on_devices', '003_oauth_tokens', '004_web_sessions', '005_final_tallies', '006_recorder', '007_unknown_memory', '008_sealed_api_keys', '009_storage_quotas']);
      expect(await db.selectFrom('device_runs').select('id').execute()).toEqual([]);
    } finally {
      for (const database of databases) await database.close();
    }
  });

  it('009 counts the files stored before it, and its triggers count every file after', async () => {
    const database = await open(engine, schema());
    try {
      await migrate(database, { through: '007_unknown_memory' });
      const db = database.db as any;
      // Keys as 007 stored them: 32 letters and digits, beside their SHA-256.
      const apiKey = (email: string) => email.replace(/[^a-z]/g, '').padEnd(32, 'K').slice(0, 32);
      const user = async (email: string) =>
        (await db.insertInto('users').values({ email, password_hash: 'x', first_name: '', last_name: '', status: 'ENABLED', role: 'USER', plan: 'GOLD', api_key: apiKey(email), api_key_hash: createHash('sha256').update(apiKey(email)).digest('hex'), create_time: 0 }).returning('id').executeTakeFirstOrThrow()).id;
      const file = (userId: number, size: number) =>
        db.insertInto('files').values({ user_id: userId, name: 'f', size, mimetype: 'x', sha256: 's', blob_key: 'b', state: 'READY', direction: 'INPUT', properties_json: '{}', create_time: 0 }).returning('id').executeTakeFirstOrThrow();
      const alice = await user('alice@example.com');
      const bob = await user('bob@example.com');
      const carol = await user('carol@example.com');
      await file(alice, 100);
      await file(alice, 250);
      await file(bob, 7);
      await migrate(database, { sealApiKey: apiKeySealer(fixedKeyRing([generateSecretKey()], 'the test ring')) });
      const usage = async () =>
        Object.fromEntries((await db.selectFrom('storage_usage').select(['user_id', 'used_bytes']).execute()).map((row: { user_id: number; used_bytes: number }) => [row.user_id, Number(row.used_bytes)]));
      expect(await usage()).toEqual({ [alice]: 350, [bob]: 7 });
      const added = await file(carol, 40);
      await file(alice, 1);
      await db.deleteFrom('files').where('id', '=', added.id).execute();
      await db.deleteFrom('users').where('id', '=', bob).execute();
      expect(await usage()).toEqual({ [alice]: 351, [carol]: 0 });
    } finally {
      await database.close();
    }
  });

  it('refuses a database that a newer version migrated, changing nothing', async () => {
    const database = await open(engine, schema());
    try {
      await migrate(database);
      const db = database.db as any;
      await db.insertInto('kysely_migration').values({ name: '999_from_the_future', timestamp: new Date().toISOString() }).execute();
      await expect(migrate(database)).rejects.toThrow(/migrated by a newer devicecloud \(999_from_the_future\)/);
    } finally {
      await database.close();
    }
  });

  it('008 seals the plain API keys of an existing database and drops them, on disk too', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-008-'));
    const file = path.join(dir, 'devicecloud.db');
    const database = await open(engine, schema(), file);
    try {
      await migrate(database, { through: '007_unknown_memory' });
      const db = database.db as any;
      const keys = [generateApiKey(), generateApiKey(), generateApiKey()];
      const ids: number[] = [];
      for (const [index, key] of keys.entries()) {
        const row = await db
          .insertInto('users')
          .values({ email: `u${index}@example.com`, password_hash: 'x', first_name: 'F', last_name: 'L', status: 'ENABLED', role: 'USER', plan: 'GOLD', api_key: key, api_key_hash: apiKeyHash(key), create_time: 1000 + index })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(Number(row.id));
      }
      await db.insertInto('web_sessions').values({ user_id: ids[0], token_hash: 'h', csrf_token: 'c', create_time: 5000, expires_time: 9000 }).execute();

      // Without the encryption key, keys cannot be sealed: the migration stops, changing nothing.
      await expect(migrate(database)).rejects.toThrow(/008_sealed_api_keys failed: sealing the API keys needs the API key encryption key/);
      expect((await db.selectFrom('users').select('api_key').orderBy('id').execute()).map((row: { api_key: string }) => row.api_key)).toEqual(keys);

      const ring = fixedKeyRing([generateSecretKey()], 'the test ring');
      await migrate(database, { sealApiKey: apiKeySealer(ring) });
      const rows = await db.selectFrom('users').selectAll().orderBy('id').execute();
      expect(Object.keys(rows[0])).not.toContain('api_key');
      for (const [index, row] of rows.entries()) {
        expect(row.api_key_hash).toBe(apiKeyHash(keys[index]!));
        expect(row.api_key_key_id).toBe(ring.current().id);
        expect(unseal(ring, { keyId: row.api_key_key_id, ciphertext: row.api_key_sealed }, apiKeyAssociatedData(ids[index]!))).toBe(keys[index]);
        expect(JSON.stringify(row)).not.toContain(keys[index]);
      }
      expect(await db.selectFrom('web_sessions').select(['auth_time', 'confirm_failures']).execute()).toEqual([{ auth_time: 5000, confirm_failures: 0 }]);
      if (engine === 'sqlite') {
        // Deleted text is overwritten and the write-ahead log emptied: the old keys are gone from the disk.
        for (const name of fs.readdirSync(dir)) {
          const bytes = fs.readFileSync(path.join(dir, name));
          for (const key of keys) expect(bytes.includes(Buffer.from(key)), `a plain key in ${name}`).toBe(false);
        }
      }
    } finally {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
