import { afterEach, describe, expect, it } from 'vitest';
import { type Kysely, sql } from 'kysely';
import { type Database, openDatabase } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { prepared } from '../../src/store/prepared.ts';

/**
 * store/prepared.ts compiles a statement once and binds each call's arguments where its stand-ins
 * were: a build that changes an argument, or puts it in the SQL text, must fail, not answer the
 * stand-in's rows.
 */
interface Migrations {
  kysely_migration: { name: string; timestamp: string };
}

describe('prepared statements', () => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  const open = async () => {
    database = await openDatabase({ sqliteFile: ':memory:' });
    await migrate(database);
    // Kysely's own table: rows of a known shape without the store's rules.
    const db = database.db as unknown as Kysely<Migrations>;
    await db
      .insertInto('kysely_migration')
      .values([
        { name: 'a', timestamp: 't1' },
        { name: 'b', timestamp: 't2' },
      ])
      .execute();
    return db;
  };

  it('binds each call its own arguments, in any order and repeated, beside the values the build fixed', async () => {
    const db = await open();
    const query = prepared(db, 2, (first: string, second: string) =>
      db
        .selectFrom('kysely_migration')
        .select('name')
        .where((eb) => eb.or([eb('name', '=', second), eb('timestamp', '=', first), eb('name', '=', second)]))
        .where('name', '<>', 'fixed')
        .orderBy('name'),
    );
    expect(await query('t1', 'b')).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(await query('none', 'a')).toEqual([{ name: 'a' }]);
    expect(await query('t2', 'none')).toEqual([{ name: 'b' }]);
  });

  it('runs inside the transaction it was made in', async () => {
    const db = await open();
    await db.transaction().execute(async (transaction) => {
      const trx: Kysely<Migrations> = transaction;
      await trx.deleteFrom('kysely_migration').where('name', '=', 'a').execute();
      const query = prepared(trx, 1, (name: string) =>
        trx.selectFrom('kysely_migration').select('name').where('name', '=', name),
      );
      expect(await query('a')).toEqual([]);
      expect(await query('b')).toEqual([{ name: 'b' }]);
    });
  });

  it('refuses a build that changes an argument, leaves one out, or splices one into the SQL text', async () => {
    const db = await open();
    const changed = prepared(db, 1, (name: string) =>
      db.selectFrom('kysely_migration').select('name').where('name', '=', name.toUpperCase()),
    );
    await expect(changed('a')).rejects.toThrow(/changed before it was bound/);
    const unused = prepared(db, 2, (name: string, _unused: string) =>
      db.selectFrom('kysely_migration').select('name').where('name', '=', name),
    );
    await expect(unused('a', 'b')).rejects.toThrow(/not every argument is bound/);
    const spliced = prepared(db, 1, (name: string) =>
      db
        .selectFrom('kysely_migration')
        .select('name')
        .where(sql.raw<boolean>(`name = '${name}'`)),
    );
    await expect(spliced('a')).rejects.toThrow(/part of the SQL text/);
  });
});
