/**
 * Retention rules (docs/api.md#retention): on the public cloud a project in which no test has
 * ever run loses its files after three months and is removed three months after that. On every
 * flavour each project's `archivingStrategy` archives (removes, with their results) finished runs
 * older than `archivingItemCount` days (DAYS) or beyond its newest `archivingItemCount` (RUNS).
 */
import type { Flavour } from './flavours.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** "Three months", in days (docs/api.md#retention). */
export const UNUSED_PROJECT_FILES_AFTER_MS = 90 * DAY_MS;
export const EMPTIED_PROJECT_REMOVED_AFTER_MS = 90 * DAY_MS;

/**
 * How long the device log of an interactive session (its logcat pane) is kept after the session
 * ended, unless configured (`liveLogRetentionMs`): long enough to look back at a session, not
 * forever (a busy phone logs thousands of lines a minute). Its frame goes at the end: it was only
 * for watching.
 */
export const DEFAULT_LIVE_LOG_RETENTION_MS = 30 * DAY_MS;

/** Blobs no file refers to are removed once older than this: an upload writes its blob before its record. */
export const ORPHAN_BLOB_GRACE_MS = 60 * 60 * 1000;

export function removesUnusedProjects(flavour: Flavour): boolean {
  return flavour === 'public';
}

/**
 * How long a device host keeps a run's inputs (apps, test packages) after their last use: on the
 * public cloud, where hosts are shared by every account, only long enough for the same run's other
 * device runs and retries; elsewhere a week, so that a team's app is not fetched for every run.
 * The agent's cache cap (agentCacheMaxBytes) may remove them sooner.
 */
export function agentInputRetentionMs(flavour: Flavour): number {
  return flavour === 'public' ? 60 * 60 * 1000 : 7 * DAY_MS;
}

/** What an agent keeps inputs for when its server does not say (an older server). */
export const DEFAULT_AGENT_INPUT_RETENTION_MS = 24 * 60 * 60 * 1000;
