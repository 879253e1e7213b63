/**
 * What agents report about the device runs they hold: steps and samples, artifacts, the result,
 * and each device clean again. A report for a device run the agent does not hold (never had, or
 * lost when its lease ran out) is refused with 409 and changes nothing.
 */
import { PassThrough, type Readable } from 'node:stream';
import { ConflictError, NotFoundError, PayloadTooLargeError, StorageQuotaExceededError } from '../domain/errors.ts';
import { safeFileName } from '../domain/files.ts';
import { DEVICE_MACHINE, afterInfraFailure, streakEffect } from '../domain/devices.ts';
import { FAIL_REASON_CHARS, isFinal, type DeviceRun } from '../domain/runs.ts';
import { formatBytes } from '../domain/storage.ts';
import { cutText, fitTestCases } from '../domain/test-cases.ts';
import type { User } from '../domain/users.ts';
import type { ArtifactQuery, CleanedReport, ProgressReport, ResultReport, ResultResponse } from '../protocol/v1.ts';
import type { Agent } from '../domain/agents.ts';
import { BlobTooLargeError } from '../store/blobs.ts';
import type { Store } from '../store/store.ts';
import type { Context } from './context.ts';
import { type Download, forgetBlob, openFile } from './files.ts';
import { installedByInput } from './interactive.ts';
import { type Wakeups, endDeviceRun, wake } from './run-lifecycle.ts';
import { checkWithinQuota, quotaExceeded, roomFor, streamLimit } from './storage.ts';

/** The device run, if this agent holds it and may still report on it. */
async function requireHeld(store: Store, agent: Agent, deviceRunId: number): Promise<DeviceRun> {
  const deviceRun = await store.deviceRuns.findById(deviceRunId);
  if (deviceRun === undefined || deviceRun.agentId !== agent.id) {
    throw new ConflictError(`Device run ${deviceRunId} is not held by this agent`);
  }
  // Results of a run the user aborted are still kept; a run given up on (lease lost) is not ours any more.
  if (isFinal(deviceRun.state) && deviceRun.state !== 'ABORTED') {
    throw new ConflictError(
      `Device run ${deviceRunId} already ended as ${deviceRun.state}; this agent no longer holds it`,
    );
  }
  return deviceRun;
}

export async function reportProgress(
  ctx: Context,
  agent: Agent,
  deviceRunId: number,
  report: ProgressReport,
): Promise<{ abort: boolean }> {
  return ctx.store.transaction(async (store) => {
    const accepted = await store.deviceRuns.acceptReport(deviceRunId, agent.id, report.seq);
    if (accepted !== undefined) await recordProgress(store, accepted, report);
    return { abort: (accepted ?? (await requireHeld(store, agent, deviceRunId))).state === 'ABORTED' };
  });
}

/** Steps (not for a device run already ended: an aborted one keeps its timeline) and samples. */
async function recordProgress(
  store: Store,
  deviceRun: DeviceRun,
  report: Pick<ProgressReport, 'steps' | 'samples'>,
): Promise<void> {
  if (!isFinal(deviceRun.state)) await store.deviceRuns.recordSteps(deviceRun.id, report.steps);
  if (report.samples.length > 0) await store.results.addSamples(deviceRun.id, report.samples);
}

const TAG_OF_KIND: Readonly<Record<ArtifactQuery['kind'], string>> = {
  junit: 'junit',
  log: 'logs',
  screenshot: 'screenshot',
  output: 'output',
  video: 'video',
};

const MIME_OF_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  xml: 'application/xml',
  txt: 'text/plain',
  log: 'text/plain',
  json: 'application/json',
  mp4: 'video/mp4',
  webm: 'video/webm',
  zip: 'application/zip',
};

/**
 * Stores an artifact; sending the same name again replaces it (the agent retried). An artifact that
 * would take the run's owner beyond their storage quota is not kept: the answer is 413 (the agent
 * logs it and goes on), the device run's newest step says which artifact was dropped and why, and
 * the device run's results are kept and its outcome is not changed (it is not the device's fault).
 * `declaredSize` (the request's Content-Length) lets a too large one be refused before it is read.
 */
export async function storeArtifact(
  ctx: Context,
  agent: Agent,
  deviceRunId: number,
  query: ArtifactQuery,
  body: Readable,
  declaredSize?: number,
): Promise<{ fileId: number }> {
  const deviceRun = await requireHeld(ctx.store, agent, deviceRunId);
  // Named by whatever the test package wrote: cleaned like an upload's name, or a control character
  // would make the user's XML listing unreadable (and a NUL fail the insert on PostgreSQL).
  const name = safeFileName(query.name);
  const owner = await ctx.store.users.findById(deviceRun.userId);
  if (owner === undefined) throw new NotFoundError('Device run', deviceRunId);
  try {
    return await storeWithinQuota(ctx, owner, deviceRun, name, query, body, declaredSize);
  } catch (error) {
    // Whatever refused it, the rest of the body is read and dropped: once piped, Node no longer
    // drains a request by itself, and the agent would wait on a connection that never ends.
    body.resume();
    if (error instanceof StorageQuotaExceededError)
      await ctx.store.deviceRuns.noteOnLatestStep(deviceRunId, `${error.summary}; it was not kept`);
    throw error;
  }
}

async function storeWithinQuota(
  ctx: Context,
  owner: User,
  deviceRun: DeviceRun,
  name: string,
  query: ArtifactQuery,
  body: Readable,
  declaredSize: number | undefined,
) {
  const room = await roomFor(ctx, owner, `Artifact ${name}`);
  if (declaredSize !== undefined && declaredSize > room.remaining) {
    throw quotaExceeded(
      room.storage,
      `Artifact ${name} (${formatBytes(declaredSize)}, ${declaredSize} bytes) would not fit`,
    );
  }
  const { maxBytes, quotaBound } = streamLimit(ctx, room.remaining);
  let blob;
  // Through a pass-through: a store that stops early destroys what it reads, and destroying the
  // request itself would cut the connection before the 413 could be answered.
  const source = new PassThrough();
  // pipe() does not pass on a cut connection: without this the store would wait for the rest.
  const cut = (error?: Error) => source.destroy(error ?? new Error('the artifact upload was cut off'));
  body.once('error', cut);
  body.once('close', () => {
    if (!body.readableEnded) cut();
  });
  body.pipe(source);
  try {
    blob = await ctx.blobs.put(source, { maxBytes });
  } catch (error) {
    body.unpipe(source);
    if (error instanceof BlobTooLargeError && quotaBound)
      throw quotaExceeded(room.storage, `Artifact ${name} is larger than the ${room.remaining} bytes left`);
    if (error instanceof BlobTooLargeError)
      throw new PayloadTooLargeError(`Artifact ${name} is larger than ${ctx.limits.maxUploadBytes} bytes`);
    throw error;
  }
  let replaced: string[];
  let file;
  try {
    ({ replaced, file } = await ctx.store.transaction(async (store) => {
      const replaced = await store.files.deleteOutputNamed(deviceRun.id, name);
      const file = await store.files.insert({
        userId: deviceRun.userId,
        projectId: deviceRun.projectId,
        deviceRunId: deviceRun.id,
        name,
        size: blob.size,
        mimetype: MIME_OF_EXTENSION[name.toLowerCase().split('.').pop() ?? ''] ?? 'application/octet-stream',
        sha256: blob.sha256,
        blobKey: blob.key,
        state: 'READY',
        direction: 'OUTPUT',
        inputType: null,
        osType: null,
        duplicate: false,
        properties: {},
        tags: [TAG_OF_KIND[query.kind]],
        createTime: ctx.clock(),
      });
      await checkWithinQuota(store, owner, `Artifact ${name}`, blob.size);
      return { replaced, file };
    }));
  } catch (error) {
    await forgetBlob(ctx, blob.key);
    throw error;
  }
  for (const key of replaced) if (key !== blob.key) await forgetBlob(ctx, key);
  return { fileId: file.id };
}

export async function reportResult(
  ctx: Context,
  agent: Agent,
  deviceRunId: number,
  report: ResultReport,
): Promise<ResultResponse> {
  const now = ctx.clock();
  const wakeups: Wakeups = new Set();
  // What tests wrote is cut, never refused (an agent of another version may not have cut it).
  const fitted = fitTestCases(report.testCases);
  const failReason = [report.failReason, fitted.note].filter((part) => part !== null).join('; ');
  const answer = await ctx.store.transaction(async (store): Promise<ResultResponse> => {
    const deviceRun = await store.deviceRuns.acceptReport(deviceRunId, agent.id, report.seq);
    // Not accepted: not held (409), or a batch already applied, whose answer is the state.
    if (deviceRun === undefined) return { state: (await requireHeld(store, agent, deviceRunId)).state };
    await recordProgress(store, deviceRun, { steps: report.steps ?? [], samples: report.samples ?? [] });
    const checkDevice = await recordDeviceOutcome(ctx, store, deviceRun.deviceId, report);
    // Last: it ends by locking the run (PostgreSQL), which is then held only until the commit.
    await endDeviceRun(
      store,
      now,
      deviceRun,
      {
        state: report.outcome,
        failReason: failReason === '' ? null : cutText(failReason, FAIL_REASON_CHARS),
        testCases: fitted.cases,
        retryable: report.refused !== true,
      },
      wakeups,
    );
    // A device run the user aborted stays ABORTED.
    return { state: isFinal(deviceRun.state) ? deviceRun.state : report.outcome, ...(checkDevice && { checkDevice }) };
  });
  wake(ctx, wakeups);
  return answer;
}

/** The device goes to be cleaned; its infrastructure failures in a row decide whether it is checked first, or taken out. */
async function recordDeviceOutcome(
  ctx: Context,
  store: Store,
  deviceId: number,
  report: ResultReport,
): Promise<boolean> {
  const effect = streakEffect(report.outcome, report.refused === true);
  if (effect !== 'count') {
    await store.devices.transition(deviceId, 'runEnded', { resetStreak: effect === 'reset' });
    return false;
  }
  const streak = await store.devices.recordInfraFailure(deviceId);
  const next = afterInfraFailure(streak, ctx.limits.maxInfraFailures);
  if (next === 'OUT') {
    await store.devices.transition(deviceId, 'takeOut', {
      reason: `failed ${streak} device runs in a row for reasons outside the tests, again after an automatic health check and cleaning`,
    });
  } else if (next === 'CHECK') {
    await store.devices.transition(deviceId, 'runEnded', {
      reason: `failed ${streak} device runs in a row for reasons outside the tests: being checked (health, full cleaning) before it takes work again`,
    });
  } else {
    await store.devices.transition(deviceId, 'runEnded');
  }
  return next === 'CHECK';
}

export async function reportCleaned(
  ctx: Context,
  agent: Agent,
  deviceId: number,
  report: CleanedReport,
): Promise<{ state: string }> {
  if (report.ok) {
    // One statement on the hot path; a device taken out of service after repeated failures stays out until an operator acts.
    const state = await ctx.store.devices.toIdleAfterCleaning(deviceId, agent.id);
    if (state === undefined) throw new NotFoundError('Device', deviceId);
    return { state };
  }
  const device = await ctx.store.devices.findById(deviceId);
  if (device === undefined || device.agentId !== agent.id) throw new NotFoundError('Device', deviceId);
  // Already out of service: it stays out for the reason it was taken out.
  await ctx.store.devices.transition(deviceId, 'takeOut', {
    reason: `cleaning failed: ${report.report}`.slice(0, 1000),
  });
  return { state: DEVICE_MACHINE.target('takeOut') };
}

/** An input file of a device run the agent holds, for download. */
export async function openAssignedFile(
  ctx: Context,
  agent: Agent,
  deviceRunId: number,
  fileId: number,
): Promise<Download> {
  const deviceRun = await requireHeld(ctx.store, agent, deviceRunId);
  const run = await ctx.store.testRuns.findById(deviceRun.testRunId);
  const refs = run?.config.files ?? [];
  // An interactive session's apps are named by its inputs (docs/api.md#interactive-sessions).
  const named = refs.some((ref) => ref.id === fileId) || (await installedByInput(ctx, deviceRun.id, fileId));
  const file = named ? (await ctx.store.files.byIds([fileId])).get(fileId) : undefined;
  if (file === undefined) throw new NotFoundError('File', fileId);
  return openFile(ctx, file);
}
