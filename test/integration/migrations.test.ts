import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';

const open = (engine: string, schema: string) =>
  openDatabase({ databaseUrl: engine === 'postgres' ? POSTGRES_URL : undefined, sqliteFile: ':memory:', pgSchema: schema, pgPoolSize: 4 });

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
      expect(rows.map((row: { name: string }) => row.name)).toEqual(['001_core', '002_runs_on_devices', '003_oauth_tokens', '004_web_sessions', '005_final_tallies', '006_recorder', '007_unknown_memory', '009_storage_quotas']);
      expect(await db.selectFrom('device_runs').select('id').execute()).toEqual([]);
    } finally {
      for (const database of databases) await database.close();
    }
  });

  it('009 counts the files stored before it, and its triggers count every file after', async () => {
    const database = await open(engine, schema());
    try {
      await migrate(database, { upTo: '007_unknown_memory' });
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
      await migrate(database);
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
});
