import { randomBytes } from 'node:crypto';
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
      expect(rows.map((row: { name: string }) => row.name)).toEqual(['001_core', '002_runs_on_devices', '003_oauth_tokens', '004_web_sessions', '005_final_tallies', '006_recorder', '007_unknown_memory']);
      expect(await db.selectFrom('device_runs').select('id').execute()).toEqual([]);
    } finally {
      for (const database of databases) await database.close();
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
