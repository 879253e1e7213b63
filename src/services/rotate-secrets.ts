/**
 * Key rotation: every API key sealed with another key than the ring's current one is opened with
 * its old key and sealed again with the current one, a page of users at a time. A key reset
 * racing with it wins (its row is left alone). Keys that no row uses any more may then leave the
 * ring.
 */
import type { Context } from './context.ts';
import { apiKeyAssociatedData, open, seal } from './secret-box.ts';

export interface ResealReport {
  /** The key that seals every API key now. */
  readonly keyId: string;
  readonly resealed: number;
  /** How many API keys each key id seals, after the rotation. */
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
  return { keyId: current.id, resealed, byKeyId: await ctx.store.users.countByKeyId() };
}
