/**
 * The store snapshot (test/support/snapshot.ts) sees what it claims to: the hostile-input drive
 * passes when two snapshots are equal, so a snapshot that stopped seeing writes would pass it too.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { createHarness } from '../support/harness.ts';
import { difference, snapshotter } from '../support/snapshot.ts';

describe.each(ENGINES)('the store snapshot (%s)', (engine) => {
  it('sees a row added and a row changed in place, and nothing when nothing was written', async () => {
    const h = await createHarness(engine);
    try {
      const take = await snapshotter(h.database, h.blobDir);
      const empty = await take();
      expect(difference(empty, await take())).toBe('');
      const someone = await h.user();
      const added = await take();
      expect(difference(empty, added)).toMatch(/users: \d+ → \d+ rows/);
      await sql`UPDATE users SET email = 'changed@example.com' WHERE id = ${someone.user.id}`.execute(h.database.db);
      expect(difference(added, await take())).toBe('rows changed in place');
    } finally {
      await h.close();
    }
  });
});
