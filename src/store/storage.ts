/**
 * Storage usage per account. `used_bytes` is written only by the triggers on `files` (migration
 * 009); this module reads it and sets the operator's override. A user without a row has stored
 * nothing yet and has no override.
 */
import type { Kysely } from 'kysely';
import type { StorageUsage } from '../domain/storage.ts';
import type { Tables } from './schema.ts';

export type StorageStore = ReturnType<typeof storageStore>;

const NOTHING: StorageUsage = { usedBytes: 0, quotaOverrideBytes: null };

export function storageStore(db: Kysely<Tables>) {
  return {
    async usageOf(userId: number): Promise<StorageUsage> {
      const row = await db
        .selectFrom('storage_usage')
        .select(['used_bytes', 'quota_bytes'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row === undefined
        ? NOTHING
        : {
            usedBytes: Number(row.used_bytes),
            quotaOverrideBytes: row.quota_bytes === null ? null : Number(row.quota_bytes),
          };
    },

    /** Every account's usage that has a row, in one query (operators' listing). */
    async usageOfAll(): Promise<Map<number, StorageUsage>> {
      const rows = await db.selectFrom('storage_usage').select(['user_id', 'used_bytes', 'quota_bytes']).execute();
      return new Map(
        rows.map((row) => [
          row.user_id,
          {
            usedBytes: Number(row.used_bytes),
            quotaOverrideBytes: row.quota_bytes === null ? null : Number(row.quota_bytes),
          },
        ]),
      );
    },

    /** The operator's override; null goes back to the plan's default. */
    async setQuotaOverride(userId: number, quotaBytes: number | null): Promise<void> {
      await db
        .insertInto('storage_usage')
        .values({ user_id: userId, quota_bytes: quotaBytes })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ quota_bytes: quotaBytes }))
        .execute();
    },
  };
}
