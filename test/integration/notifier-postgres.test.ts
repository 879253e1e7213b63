import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Notifier, postgresNotifier } from '../../src/store/notifier.ts';
import { type Database, openDatabase } from '../../src/store/db.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';

describe.runIf(ENGINES.includes('postgres'))('notifications between servers through PostgreSQL', () => {
  const schema = `${process.env.DEVICECLOUD_TEST_SCHEMA_PREFIX ?? 'dct_'}${randomBytes(6).toString('hex')}`;
  let database: Database;
  const notifiers: Notifier[] = [];
  const logged: string[] = [];
  const server = async (inSchema = schema) => {
    const notifier = await postgresNotifier({
      url: POSTGRES_URL,
      schema: inSchema,
      db: database.db,
      log: (line) => logged.push(line),
    });
    notifiers.push(notifier);
    return notifier;
  };

  beforeAll(async () => {
    database = await openDatabase({ databaseUrl: POSTGRES_URL, sqliteFile: ':memory:', pgSchema: schema });
  });
  afterAll(async () => {
    for (const notifier of notifiers) await notifier.close();
    await database.close();
  });

  it('wakes waiters on every server of the schema, and no others', async () => {
    const [a, b, elsewhere] = [await server(), await server(), await server(`${schema}_other`)];
    const started = performance.now();
    const onA = a.wait('agent:7', 5000);
    const onB = b.wait('agent:7', 5000);
    const otherTopic = a.wait('agent:8', 300);
    const otherSchema = elsewhere.wait('agent:7', 300);
    b.notify('agent:7');
    expect(await onA).toBe(true);
    expect(await onB).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(await otherTopic).toBe(false);
    expect(await otherSchema).toBe(false);
  });

  it('listens again after its connection is killed, waking its waiters once since it may have missed something', async () => {
    const a = await server();
    const waiting = a.wait('agent:9', 20_000);
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const channel = `devicecloud_${schema}`;
      const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1', [
        `LISTEN "${channel}"`,
      ]);
      expect(rows.length).toBeGreaterThan(0);
      for (const { pid } of rows) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    expect(await waiting).toBe(true);
    expect(logged.some((line) => line.includes('reconnecting'))).toBe(true);
    const later = a.wait('agent:10', 5000);
    (await server()).notify('agent:10');
    expect(await later).toBe(true);
  });
});
