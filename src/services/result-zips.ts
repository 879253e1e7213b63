/**
 * Zips of what device sessions produced and ran with, and a session's input file set
 * (docs/api.md#result-zips). A session's zips stream straight to the caller; a run's zip is
 * written, as a stream, into the blob store and kept as a file of the user's, which is what the
 * established API answers (`POST …/runs/{id}/logs.zip` → the file, then `/files/{id}/file`).
 * Either way no zip is ever held in memory: entries are read from the blob store one at a time.
 */
import { Readable } from 'node:stream';
import { InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import type { UserFile } from '../domain/files.ts';
import {
  EntryNames,
  RUN_ZIP_KINDS,
  type RunZipKind,
  TAGS_OF_RUN_ZIP,
  entrySegment,
  performanceCsv,
  worthCompressing,
} from '../domain/result-zips.ts';
import type { DeviceRun } from '../domain/runs.ts';
import type { User } from '../domain/users.ts';
import { type ZipSource, zipStream } from '../files/zip-writer.ts';
import { BlobTooLargeError } from '../store/blobs.ts';
import type { Context } from './context.ts';
import { forgetBlob } from './files.ts';
import { type DeviceRunScope, requireDeviceRun, requireRun } from './runs.ts';
import { checkWithinQuota, quotaExceeded, roomFor } from './storage.ts';

export { RUN_ZIP_KINDS, type RunZipKind };

export interface ZipDownload {
  readonly fileName: string;
  /** The zip as it is written: its length is not known ahead. */
  readonly stream: Readable;
}

/** The session's output files (those carrying one of `tags`, or all), one entry each, in the order stored. */
export async function outputFilesZip(
  ctx: Context,
  user: User,
  deviceRunId: number,
  tags: readonly string[],
  scope?: DeviceRunScope,
): Promise<ZipDownload> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope);
  const files = await ctx.store.files.outputsOf(deviceRun.id, tags);
  return {
    fileName: `device-session-${deviceRun.id}-output-files.zip`,
    stream: zipStream(flatSources(ctx, files)),
  };
}

/**
 * `…/result-data.zip`: everything the session produced, one entry per output file in the order
 * stored, then its CPU and memory samples as `performance.csv` when it reported any.
 */
export async function resultDataZip(
  ctx: Context,
  user: User,
  deviceRunId: number,
  scope?: DeviceRunScope,
): Promise<ZipDownload> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope);
  const files = await ctx.store.files.outputsOf(deviceRun.id);
  const samples = await ctx.store.results.samples(deviceRun.id);
  const names = new EntryNames();
  const sources = files.map((file) => fileSource(ctx, file, names.add(null, entrySegment(file.name))));
  if (samples.length > 0) {
    const csv = Buffer.from(performanceCsv(samples));
    sources.push({
      name: names.add(null, 'performance.csv'),
      mtime: new Date(deviceRun.endTime ?? deviceRun.createTime),
      compress: true,
      open: () => Readable.from([csv]),
    });
  }
  return { fileName: `device-session-${deviceRun.id}-result-data.zip`, stream: zipStream(sources) };
}

/**
 * The files the session ran with (its run's application, tests and data), in the order the run
 * named them. A file deleted since is left out; so is any id that is not the run owner's file.
 */
export async function inputFiles(
  ctx: Context,
  user: User,
  deviceRunId: number,
  scope?: DeviceRunScope,
): Promise<UserFile[]> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope);
  const run = await ctx.store.testRuns.findById(deviceRun.testRunId);
  if (run === undefined) throw new NotFoundError('Device run', deviceRunId);
  const ids = [...new Set(run.config.files.map((ref) => ref.id))];
  const owned = await ctx.store.files.ownedByIds(deviceRun.userId, ids);
  return ids.flatMap((id) => {
    const file = owned.get(id);
    return file !== undefined && file.deviceRunId === null ? [file] : [];
  });
}

export async function inputFilesZip(
  ctx: Context,
  user: User,
  deviceRunId: number,
  scope?: DeviceRunScope,
): Promise<ZipDownload> {
  const files = await inputFiles(ctx, user, deviceRunId, scope);
  return { fileName: `device-session-${deviceRunId}-input-files.zip`, stream: zipStream(flatSources(ctx, files)) };
}

/** An output file's record, as the session's output file set holds it. */
export async function outputFile(
  ctx: Context,
  user: User,
  deviceRunId: number,
  fileId: number,
  scope?: DeviceRunScope,
): Promise<UserFile> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope);
  const file = await ctx.store.files.findOutput(deviceRun.id, fileId);
  if (file === undefined) throw new NotFoundError('File', fileId);
  return file;
}

/**
 * `POST …/runs/{id}/<kind>.zip`: the run's results of that kind across its current device sessions
 * (or those named in `deviceRunIds`), one folder per session, written into the blob store and kept
 * as a file of the user's (it counts against the storage quota like any file). A run with nothing
 * of that kind gives a valid empty zip.
 */
export async function createRunZip(
  ctx: Context,
  user: User,
  runId: number,
  projectId: number | undefined,
  kind: RunZipKind,
  deviceRunIds: readonly number[] | undefined,
): Promise<UserFile> {
  const { run } = await requireRun(ctx, user, runId, projectId);
  const sessions = await chosenSessions(ctx, user, run.id, deviceRunIds ?? []);
  const sources = await runSources(ctx, sessions, kind);
  const name = `run-${run.id}-${kind}.zip`;
  const what = `The ${kind} zip of test run ${run.id}`;
  const room = await roomFor(ctx, user, what);
  let blob;
  try {
    // Generated, not uploaded: only the quota bounds it.
    blob = await ctx.blobs.put(zipStream(sources), { maxBytes: room.remaining });
  } catch (error) {
    if (error instanceof BlobTooLargeError)
      throw quotaExceeded(room.storage, `${what} is larger than the ${room.remaining} bytes left`);
    throw error;
  }
  try {
    return await ctx.store.transaction(async (store) => {
      const duplicate = await store.files.userHasSha(user.id, blob.sha256);
      const file = await store.files.insert({
        userId: user.id,
        // Removed with its project, as the run and its results are.
        projectId: run.projectId,
        name,
        size: blob.size,
        mimetype: 'application/zip',
        sha256: blob.sha256,
        blobKey: blob.key,
        state: 'READY',
        direction: 'OUTPUT',
        inputType: null,
        osType: null,
        duplicate,
        properties: {},
        tags: [],
        createTime: ctx.clock(),
      });
      await checkWithinQuota(store, user, what, blob.size);
      return file;
    });
  } catch (error) {
    await forgetBlob(ctx, blob.key);
    throw error;
  }
}

/**
 * The run's current sessions, or those of them named. A session of another run or user is 404
 * like an unknown one; one a retry replaced is refused, naming it: its results are not the run's.
 */
async function chosenSessions(ctx: Context, user: User, runId: number, named: readonly number[]): Promise<DeviceRun[]> {
  const current = await ctx.store.deviceRuns.currentOfRun(runId);
  if (named.length === 0) return current;
  const wanted = new Set(named);
  const replaced: number[] = [];
  for (const id of wanted) {
    if (current.some((deviceRun) => deviceRun.id === id)) continue;
    const deviceRun = await ctx.store.deviceRuns.findOwned(user.id, id);
    if (deviceRun === undefined || deviceRun.testRunId !== runId) throw new NotFoundError('Device run', id);
    replaced.push(id);
  }
  if (replaced.length > 0) {
    throw new InvalidParameterError(
      'deviceRunIds',
      `Device run${replaced.length > 1 ? 's' : ''} ${replaced.join(', ')} of test run ${runId} ${replaced.length > 1 ? 'were' : 'was'} replaced by a retry, so ${replaced.length > 1 ? 'their' : 'its'} results are no longer the run's; name the run's current device sessions (…/runs/${runId}/device-sessions)`,
    );
  }
  return current.filter((deviceRun) => wanted.has(deviceRun.id));
}

async function runSources(ctx: Context, sessions: readonly DeviceRun[], kind: RunZipKind): Promise<ZipSource[]> {
  const devices = await ctx.store.devices.byIds([...new Set(sessions.map((session) => session.deviceId))]);
  const files = await ctx.store.files.outputsOfMany(
    sessions.map((session) => session.id),
    TAGS_OF_RUN_ZIP[kind],
  );
  const names = new EntryNames();
  const sources: ZipSource[] = [];
  for (const session of sessions) {
    const own = files.filter((file) => file.deviceRunId === session.id);
    const samples = kind === 'performance' ? await ctx.store.results.samples(session.id) : [];
    if (own.length === 0 && samples.length === 0) continue;
    const folder = names.folder(session.id, devices.get(session.deviceId)?.displayName ?? 'device');
    if (samples.length > 0) {
      const csv = Buffer.from(performanceCsv(samples));
      sources.push({
        name: names.add(folder, 'performance.csv'),
        mtime: new Date(session.endTime ?? session.createTime),
        compress: true,
        open: () => Readable.from([csv]),
      });
    }
    for (const file of own) sources.push(fileSource(ctx, file, names.add(folder, entrySegment(file.name))));
  }
  return sources;
}

function flatSources(ctx: Context, files: readonly UserFile[]): ZipSource[] {
  const names = new EntryNames();
  return files.map((file) => fileSource(ctx, file, names.add(null, entrySegment(file.name))));
}

function fileSource(ctx: Context, file: UserFile, name: string): ZipSource {
  return {
    name,
    // The file's own time, so that the same files always make the same zip (and the same blob).
    mtime: new Date(file.createTime),
    compress: worthCompressing(file.name, file.mimetype),
    open: () => ctx.blobs.read(file.blobKey),
  };
}
