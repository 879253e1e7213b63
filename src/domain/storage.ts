/**
 * Storage quotas: how many bytes of files an account may keep, counting its uploads and the
 * artifacts its device runs produced. Every file record counts its own size, even when the bytes
 * are shared with another record (the blob store keeps one copy of identical bytes): the figure
 * is what the user sees listed, so they can tell what to delete to free it.
 */
import type { Plan } from './users.ts';

const GIB = 1024 ** 3;

/** The quota of an account without an operator's override. */
export const PLAN_STORAGE_QUOTA_BYTES: Readonly<Record<Plan, number>> = {
  SILVER: 10 * GIB,
  GOLD: 50 * GIB,
  PLATINUM: 250 * GIB,
};

/** Largest override an operator may set: far beyond any disk, and exact as a double. */
export const MAX_STORAGE_QUOTA_BYTES = 2 ** 50;

export interface StorageUsage {
  readonly usedBytes: number;
  /** The operator's override; null: the plan's default. */
  readonly quotaOverrideBytes: number | null;
}

export interface Storage {
  readonly usedBytes: number;
  readonly quotaBytes: number;
}

export function storageOf(plan: Plan, usage: StorageUsage): Storage {
  return { usedBytes: usage.usedBytes, quotaBytes: usage.quotaOverrideBytes ?? PLAN_STORAGE_QUOTA_BYTES[plan] };
}

/** Bytes that may still be stored (0 when at or over the quota, which a lowered quota allows). */
export function remainingBytes(storage: Storage): number {
  return Math.max(0, storage.quotaBytes - storage.usedBytes);
}

/** 1536 → "1.5 KiB": for messages, beside the exact figure. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`;
}

/** Says what is used of what, for the quota error and the device run's note. */
export function describeStorage(storage: Storage): string {
  return `${formatBytes(storage.usedBytes)} (${storage.usedBytes} bytes) of the storage quota of ${formatBytes(storage.quotaBytes)} (${storage.quotaBytes} bytes) are used`;
}
