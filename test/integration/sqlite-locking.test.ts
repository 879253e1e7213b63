import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';

/**
 * The admin commands write to the SQLite file that a running server holds open. A deferred
 * transaction that reads, then writes after the other process committed, fails at once with
 * "database is locked" (busy_timeout does not apply); transactions must take the write lock first.
 */
describe('SQLite shared by two processes', () => {
  let dir: string;
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('takes the write lock when a transaction begins, so a writer elsewhere waits instead of failing it', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-sqlite-'));
    const file = path.join(dir, 'devicecloud.db');
    database = await openDatabase({ sqliteFile: file });
    await migrate(database);
    const other = new BetterSqlite3(file);
    other.pragma('busy_timeout = 0');
    try {
      const insertKey = (db: any, key: string) =>
        db.insertInto('kysely_migration').values({ name: key, timestamp: new Date().toISOString() }).execute();
      await database.db.transaction().execute(async (trx) => {
        await (trx as any).selectFrom('kysely_migration').selectAll().execute();
        // Another process writing now must find the lock taken (it would wait with its busy_timeout).
        expect(() => other.prepare("insert into kysely_migration (name, timestamp) values ('x', 'y')").run()).toThrow(
          /locked|busy/i,
        );
        await insertKey(trx, 'zz_inside');
      });
      other.prepare("insert into kysely_migration (name, timestamp) values ('zz_after', 'y')").run();
      const names = other.prepare("select name from kysely_migration where name like 'zz_%' order by name").all();
      expect(names).toEqual([{ name: 'zz_after' }, { name: 'zz_inside' }]);
    } finally {
      other.close();
    }
  });
});
