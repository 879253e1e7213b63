/**
 * The retention job (domain/retention.ts): archives runs by each project's strategy, empties and
 * then removes unused projects on the public cloud, drops the live data of ended interactive
 * sessions (their frame at once, their device log after `liveLogRetentionMs`), and sweeps blobs that no file refers to any
 * more (files go with their project, run or user by cascade; their bytes are swept here). Every
 * server runs it; every step is safe to run concurrently. What it removes is logged.
 */
import {
  DEFAULT_LIVE_LOG_RETENTION_MS,
  EMPTIED_PROJECT_REMOVED_AFTER_MS,
  ORPHAN_BLOB_GRACE_MS,
  UNUSED_PROJECT_FILES_AFTER_MS,
  removesUnusedProjects,
} from '../domain/retention.ts';
import type { Context } from '../services/context.ts';
import { pruneGuesses } from '../services/password-guesses.ts';

/** Rows per statement: a long backlog is worked off in short transactions. */
const BATCH = 200;
const BLOB_BATCH = 500;
/** Log lines are small rows: more of them per statement. */
const LINE_BATCH = 5000;

export interface RetentionReport {
  archivedRuns: number;
  emptiedProjects: number;
  removedFiles: number;
  removedProjects: number;
  removedBlobs: number;
  removedTemporary: number;
  /** Frames of interactive sessions that ended, and lines of their device logs past their time. */
  removedLiveFrames: number;
  removedLiveLogLines: number;
}

export interface RetentionSettings {
  /** How long an interactive session's device log is kept after it ended (config `liveLogRetentionMs`). */
  readonly liveLogRetentionMs: number;
}

export async function applyRetention(
  ctx: Context,
  log: (message: string) => void,
  settings: RetentionSettings = { liveLogRetentionMs: DEFAULT_LIVE_LOG_RETENTION_MS },
): Promise<RetentionReport> {
  const now = ctx.clock();
  const report: RetentionReport = {
    archivedRuns: 0,
    emptiedProjects: 0,
    removedFiles: 0,
    removedProjects: 0,
    removedBlobs: 0,
    removedTemporary: 0,
    removedLiveFrames: 0,
    removedLiveLogLines: 0,
  };
  const store = ctx.store.retention;

  for (const [strategy, archive] of [
    ['DAYS', () => store.archiveRunsOlderThanDays(now, BATCH)],
    ['RUNS', () => store.archiveRunsBeyondCount(BATCH)],
  ] as const) {
    for (let batch = await archive(); batch.length > 0; batch = batch.length < BATCH ? [] : await archive()) {
      report.archivedRuns += batch.length;
      log(
        `retention: archived ${batch.length} run(s) by archivingStrategy ${strategy}: ${batch.map((run) => `run ${run.id} of project ${run.projectId}`).join(', ')}`,
      );
    }
  }

  if (removesUnusedProjects(ctx.flavour)) {
    for (let batch = await emptyBatch(); batch.length > 0; batch = batch.length < BATCH ? [] : await emptyBatch()) {
      report.emptiedProjects += batch.length;
      report.removedFiles += batch.reduce((sum, project) => sum + project.files, 0);
      log(
        `retention: removed the files of projects in which no test ran for three months: ${batch.map((p) => `project ${p.id} (${p.files} file(s))`).join(', ')}`,
      );
    }
    for (let batch = await removeBatch(); batch.length > 0; batch = batch.length < BATCH ? [] : await removeBatch()) {
      report.removedProjects += batch.length;
      log(
        `retention: removed projects still unused three months after their files went: ${batch.map((id) => `project ${id}`).join(', ')}`,
      );
    }
  }

  await removeLiveData(ctx, now, settings, report, log);

  report.removedBlobs = await sweepBlobs(ctx, now - ORPHAN_BLOB_GRACE_MS);
  if (report.removedBlobs > 0) log(`retention: removed ${report.removedBlobs} stored file(s) no longer referenced`);
  report.removedTemporary = await ctx.blobs.removeStaleTemporary(now - ORPHAN_BLOB_GRACE_MS);
  if (report.removedTemporary > 0)
    log(`retention: removed ${report.removedTemporary} half-written upload(s) left by a crash`);
  // Failed sign-ins that left their window (services/password-guesses.ts): not worth a log line.
  await pruneGuesses(ctx);
  return report;

  function emptyBatch() {
    return ctx.store.transaction((tx) =>
      tx.retention.emptyUnusedProjects(now - UNUSED_PROJECT_FILES_AFTER_MS, now, BATCH),
    );
  }
  function removeBatch() {
    return store.removeEmptiedProjects(now - EMPTIED_PROJECT_REMOVED_AFTER_MS, BATCH);
  }
}

/** Interactive sessions' live data (migration 023) outlives them only as long as it is of use. */
async function removeLiveData(
  ctx: Context,
  now: number,
  settings: RetentionSettings,
  report: RetentionReport,
  log: (message: string) => void,
): Promise<void> {
  const live = ctx.store.liveFrames;
  for (let batch = await live.removeEndedFrames(now, BATCH); batch.length > 0;) {
    report.removedLiveFrames += batch.length;
    batch = batch.length < BATCH ? [] : await live.removeEndedFrames(now, BATCH);
  }
  const endedBefore = now - settings.liveLogRetentionMs;
  for (let removed = await live.removeEndedLines(endedBefore, LINE_BATCH); removed > 0;) {
    report.removedLiveLogLines += removed;
    removed = removed < LINE_BATCH ? 0 : await live.removeEndedLines(endedBefore, LINE_BATCH);
  }
  if (report.removedLiveFrames > 0)
    log(`retention: removed the last frame of ${report.removedLiveFrames} ended interactive session(s)`);
  if (report.removedLiveLogLines > 0)
    log(
      `retention: removed ${report.removedLiveLogLines} device log line(s) of interactive sessions ended over ${settings.liveLogRetentionMs} ms ago`,
    );
}

async function sweepBlobs(ctx: Context, writtenBefore: number): Promise<number> {
  let removed = 0;
  let candidates: string[] = [];
  const sweep = async () => {
    const used = await ctx.store.retention.referencedBlobs(candidates);
    for (const key of candidates) {
      if (used.has(key)) continue;
      await ctx.blobs.delete(key);
      removed += 1;
    }
    candidates = [];
  };
  for await (const blob of ctx.blobs.list()) {
    if (blob.modifiedTime >= writtenBefore) continue;
    candidates.push(blob.key);
    if (candidates.length >= BLOB_BATCH) await sweep();
  }
  await sweep();
  return removed;
}

export interface RetentionJob {
  stop(): Promise<void>;
}

/** Runs the job now and then every `intervalMs`, one pass at a time. */
export function startRetention(options: {
  ctx: Context;
  log: (message: string) => void;
  intervalMs: number;
  liveLogRetentionMs: number;
}): RetentionJob {
  let running: Promise<unknown> = Promise.resolve();
  const pass = () => {
    running = running
      .then(() => applyRetention(options.ctx, options.log, options))
      .catch((error: unknown) => options.log(`retention failed: ${(error as Error).message}`));
  };
  pass();
  const timer = setInterval(pass, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
