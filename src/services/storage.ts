/**
 * Storage quotas (domain/storage.ts): what an account has stored and may still store, the checks
 * an upload or an artifact goes through, and the operator's override.
 *
 * An upload is checked three times, so that nothing beyond the quota is ever kept: before a byte is
 * read (an account at its quota is refused at once); while it streams (the blob store stops at the
 * bytes that are left, so an upload that would go over is cut there and its temporary file
 * removed); and in the transaction that records the file, after the usage trigger has counted it
 * (two uploads of one account at the same time are serialized on its usage row, and the second is
 * refused and rolled back if both together go over).
 */
import { InvalidParameterError, StorageQuotaExceededError } from '../domain/errors.ts';
import {
  MAX_STORAGE_QUOTA_BYTES,
  type Storage,
  describeStorage,
  formatBytes,
  remainingBytes,
  storageOf,
} from '../domain/storage.ts';
import type { User } from '../domain/users.ts';
import type { Store } from '../store/store.ts';
import type { Context } from './context.ts';

export function storageOfUser(store: Store, user: Pick<User, 'id' | 'plan'>): Promise<Storage> {
  return store.storage.usageOf(user.id).then((usage) => storageOf(user.plan, usage));
}

/** What may still be stored for the user; throws when nothing may (the quota is used up). */
export async function roomFor(
  ctx: Context,
  user: Pick<User, 'id' | 'plan'>,
  what: string,
): Promise<{ storage: Storage; remaining: number }> {
  const storage = await storageOfUser(ctx.store, user);
  const remaining = remainingBytes(storage);
  if (remaining === 0) throw quotaExceeded(storage, `${what} cannot be stored`);
  return { storage, remaining };
}

/**
 * The largest size to accept while streaming, and how to tell a cut at the quota from one at the
 * upload limit: `maxBytes` is the smaller of the two.
 */
export function streamLimit(ctx: Context, remaining: number): { maxBytes: number; quotaBound: boolean } {
  return remaining < ctx.limits.maxUploadBytes
    ? { maxBytes: remaining, quotaBound: true }
    : { maxBytes: ctx.limits.maxUploadBytes, quotaBound: false };
}

/** In the transaction that recorded the file: refuses (and so rolls back) when it went over. */
export async function checkWithinQuota(
  store: Store,
  user: Pick<User, 'id' | 'plan'>,
  what: string,
  size: number,
): Promise<void> {
  const storage = await storageOfUser(store, user);
  if (storage.usedBytes > storage.quotaBytes) {
    throw quotaExceeded(
      { usedBytes: storage.usedBytes - size, quotaBytes: storage.quotaBytes },
      `${what} (${formatBytes(size)}, ${size} bytes) would not fit`,
    );
  }
}

export function quotaExceeded(storage: Storage, what: string): StorageQuotaExceededError {
  const summary = `${what}: ${describeStorage(storage)}`;
  return new StorageQuotaExceededError(
    `${summary}. Nothing was stored; delete files you no longer need, or ask an operator for a larger quota`,
    summary,
  );
}

/** The operator's override (`devicecloud admin set-quota`, POST /admin/users/{id}); null: the plan's default. */
export async function setStorageQuota(ctx: Context, user: User, quotaBytes: number | null): Promise<Storage> {
  await ctx.store.storage.setQuotaOverride(user.id, checkQuota(quotaBytes));
  return storageOfUser(ctx.store, user);
}

/** An operator's input: a number of bytes (as a number or digits), or `default` / null for the plan's default. */
export function parseQuotaInput(value: unknown): number | null {
  if (value === null || value === 'default') return null;
  if (typeof value === 'number') return checkQuota(value);
  if (typeof value === 'string' && /^\d{1,16}$/.test(value.trim())) return checkQuota(Number(value.trim()));
  throw new InvalidParameterError(
    'storageQuotaBytes',
    "storageQuotaBytes must be a whole number of bytes, or 'default' for the plan's default",
  );
}

/** Every account's storage for operators' listing, in one query. */
export async function storageOfAccounts(ctx: Context, users: readonly User[]): Promise<Map<number, Storage>> {
  const usage = await ctx.store.storage.usageOfAll();
  return new Map(
    users.map((user) => [
      user.id,
      storageOf(user.plan, usage.get(user.id) ?? { usedBytes: 0, quotaOverrideBytes: null }),
    ]),
  );
}

function checkQuota(quotaBytes: number | null): number | null {
  if (
    quotaBytes !== null &&
    (!Number.isSafeInteger(quotaBytes) || quotaBytes < 0 || quotaBytes > MAX_STORAGE_QUOTA_BYTES)
  ) {
    throw new InvalidParameterError(
      'storageQuotaBytes',
      `storageQuotaBytes must be a whole number of bytes from 0 to ${MAX_STORAGE_QUOTA_BYTES}, or 'default' for the plan's default`,
    );
  }
  return quotaBytes;
}
