/**
 * Key rotation: every API key (and every run's secrets) sealed with another key than the ring's
 * current one is opened with its old key and sealed again with the current one, a page of rows at
 * a time. A key reset racing with it wins (its row is left alone). Keys that no row uses any more
 * may then leave the ring.
 */
import type { Store } from '../store/store.ts';
import type { Context } from './context.ts';
import { apiKeyAssociatedData, open, runSecretsAssociatedData, seal } from './secret-box.ts';

export interface ResealReport {
  /** The key that seals every API key now. */
  readonly keyId: string;
  readonly resealed: number;
  /** How many API keys (and runs' secrets) each key id seals, after the rotation. */
  readonly byKeyId: ReadonlyMap<string, number>;
}

const PAGE = 200;

export async function resealApiKeys(ctx: Context): Promise<ResealReport> {
  const current = ctx.keyRing.current();
  let resealed = 0;
  let afterId = 0;
  for (;;) {
    const page = await ctx.store.users.sealedWithOtherKey(current.id, afterId, PAGE);
    for (const row of page) {
      const aad = apiKeyAssociatedData(row.userId);
      const again = seal(current, open(ctx.keyRing, row, aad), aad);
      if (await ctx.store.users.resealApiKey(row.userId, row, again)) resealed += 1;
    }
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.userId;
  }
  // A run's secrets are needed until the run is deleted (a device run may be retried): a key that
  // still opens some must stay in the ring.
  afterId = 0;
  for (;;) {
    const page = await ctx.store.testRuns.secretsSealedWithOtherKey(current.id, afterId, PAGE);
    for (const row of page) {
      const aad = runSecretsAssociatedData(row.testRunId);
      if (await ctx.store.testRuns.resealSecrets(row.testRunId, row, seal(current, open(ctx.keyRing, row, aad), aad)))
        resealed += 1;
    }
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.testRunId;
  }
  return { keyId: current.id, resealed, byKeyId: await sealedCountByKeyId(ctx.store) };
}

/** How many secrets (API keys and runs' secrets) each key id seals. */
export async function sealedCountByKeyId(store: Store): Promise<Map<string, number>> {
  const byKeyId = new Map(await store.users.countByKeyId());
  for (const [id, count] of await store.testRuns.secretsCountByKeyId()) byKeyId.set(id, (byKeyId.get(id) ?? 0) + count);
  return byKeyId;
}
