/**
 * The schemas harnesses lend each other on PostgreSQL (test/support/pg-schemas.ts): an emptied
 * schema is as a fresh migration leaves it, so a test cannot see what an earlier one wrote.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrations/index.ts';
import { openDatabase } from '../../src/store/db.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, createHarness } from '../support/harness.ts';
import { childrenFirst, emptySchema, newSchemaName } from '../support/pg-schemas.ts';
import { snapshotter } from '../support/snapshot.ts';

describe('the order tables are emptied in', () => {
  it('puts every table before the tables it references, however they are listed', () => {
    const references = [
      { child: 'device_runs', parent: 'test_runs' },
      { child: 'test_runs', parent: 'users' },
      { child: 'files', parent: 'device_runs' },
      { child: 'files', parent: 'users' },
    ];
    for (const tables of [
      ['users', 'test_runs', 'device_runs', 'files', 'labels'],
      ['files', 'labels', 'device_runs', 'users', 'test_runs'],
    ]) {
      const order = childrenFirst(tables, references);
      expect([...order].sort()).toEqual([...tables].sort());
      for (const { child, parent } of references) expect(order.indexOf(child)).toBeLessThan(order.indexOf(parent));
    }
  });

  it('refuses foreign keys that form a cycle, which no order of deletes could empty', () => {
    expect(() =>
      childrenFirst(
        ['a', 'b'],
        [
          { child: 'a', parent: 'b' },
          { child: 'b', parent: 'a' },
        ],
      ),
    ).toThrow(/cycle through/);
  });
});

describe.runIf(ENGINES.includes('postgres'))('an emptied PostgreSQL schema', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('holds what a fresh migration holds, not a row of the test before, and numbers as it does', async () => {
    h = await createHarness('postgres');
    const snapshot = await snapshotter(h.database, h.blobDir);
    const alice = await h.user();
    const bob = await h.user();
    const device = await fixtures.device(h.ctx, 'Pixel');
    await fixtures.publicGroup(h.ctx, 'Pixels', [device]);
    const project = await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'shop' } });
    expect(project.status).toBe(201);
    await fixtures.file(h.ctx, alice.user, { name: 'app.apk', inputType: 'APPLICATION', osType: 'ANDROID' });
    await fixtures.run(h.ctx, alice.user, project.body.id, [device], ['SUCCEEDED'], { steps: ['INSTALL'] });
    await fixtures.file(h.ctx, bob.user, { name: 'data.zip', inputType: 'DATA' });
    const written = await snapshot();
    const filled = Object.entries(written.rows).filter(([, count]) => count > 0);
    // The run, its device run, the file and their owners: a dozen tables, or the test proves little.
    expect(filled.length).toBeGreaterThanOrEqual(8);

    await emptySchema(h.database);

    const emptied = await snapshot();
    const fresh = await openDatabase({ databaseUrl: POSTGRES_URL, sqliteFile: ':memory:', pgSchema: newSchemaName() });
    try {
      await migrate(fresh);
      expect(emptied.rows).toEqual((await snapshotter(fresh, h.blobDir).then((take) => take())).rows);
    } finally {
      await fresh.close();
    }
    // The built-in label groups are back, as a fresh migration inserts them.
    expect(emptied.rows.label_groups).toBeGreaterThan(0);
    const again = await h.user();
    expect(again.user.id).toBe(alice.user.id);
    expect(written.rows.kysely_migration).toBeGreaterThan(10);
    await migrate(h.database);
    // Nothing left to apply.
    expect((await snapshot()).rows.kysely_migration).toBe(written.rows.kysely_migration);
  });
});
