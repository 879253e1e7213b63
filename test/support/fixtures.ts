/**
 * Records the API cannot create yet in this scope (devices, runs and device runs come from
 * agents and run starts) written straight through the store, as those services will.
 */
import type { DeviceOsType } from '../../src/domain/devices.ts';
import type { Device, DeviceGroup } from '../../src/domain/devices.ts';
import { type DeviceRunState, type StepType, type TestRun, isFinal } from '../../src/domain/runs.ts';
import type { RunSettings } from '../../src/domain/run-settings.ts';
import { refreshRunState } from '../../src/services/run-lifecycle.ts';
import { Readable } from 'node:stream';
import type { UserFile } from '../../src/domain/files.ts';
import type { Context } from '../../src/services/context.ts';

export async function device(ctx: Context, name: string, osType: DeviceOsType = 'ANDROID'): Promise<Device> {
  return ctx.store.devices.insert(
    {
      displayName: name,
      manufacturer: osType === 'IOS' ? 'Apple' : 'Google',
      osType,
      platform: osType,
      releaseVersion: osType === 'IOS' ? '17.4' : '14',
      apiLevel: osType === 'IOS' ? null : 34,
    },
    ctx.clock(),
  );
}

export async function publicGroup(
  ctx: Context,
  name: string,
  devices: readonly Device[],
  osType: DeviceOsType = 'ANDROID',
): Promise<DeviceGroup> {
  const group = await ctx.store.devices.insertGroup(null, name, osType, ctx.clock());
  await ctx.store.devices.addToGroup(
    group.id,
    devices.map((d) => d.id),
  );
  return group;
}

/** Complete settings of a run on the given project, as a run start stores them. */
export function runSettings(projectId: number, changes: Partial<RunSettings> = {}): RunSettings {
  return {
    v: 1,
    osType: 'ANDROID',
    frameworkId: 1,
    projectId,
    deviceGroupId: null,
    deviceIds: [],
    files: [],
    testRunName: null,
    timeout: 600,
    testRunParameters: [],
    scheduler: 'PARALLEL',
    hookURL: null,
    maxAutoRetriesCount: 0,
    deviceLanguageCode: 'en_US',
    limitationType: null,
    limitationValue: null,
    instrumentationRunner: null,
    withAnnotation: null,
    withoutAnnotation: null,
    applicationUsername: null,
    launchApp: true,
    ...changes,
  };
}

/** A test run with one device run per state given, on the given devices in turn. */
export async function run(
  ctx: Context,
  owner: { id: number },
  projectId: number,
  devices: readonly Device[],
  states: readonly DeviceRunState[],
  options: {
    name?: string;
    testCases?: { passed: number; failed: number };
    /** The input files the run names (default: file 1, to install). */
    files?: RunSettings['files'];
    /** The step timeline each device run that ended (not excluded) went through (default: none). */
    steps?: readonly StepType[];
  } = {},
): Promise<TestRun> {
  const testRun = await ctx.store.testRuns.insert({
    projectId,
    userId: owner.id,
    name: options.name ?? null,
    osType: 'ANDROID',
    config: runSettings(projectId, { files: options.files ?? [{ id: 1, action: 'INSTALL' }] }),
    frameworkId: null,
    startedById: owner.id,
    createTime: ctx.clock(),
  });
  for (const [index, state] of states.entries()) {
    const deviceRun = await ctx.store.deviceRuns.insert({
      testRunId: testRun.id,
      projectId,
      userId: owner.id,
      deviceId: devices[index % devices.length]!.id,
      state,
      excludeReason: state === 'EXCLUDED' ? 'FRAMEWORK_NOT_SUPPORTED' : null,
      createTime: ctx.clock(),
      timeLimit: 600,
      retryState: 'NONE',
      autoRetriesLeftCount: 0,
      priority: 2,
      frameworkKind: 'server-side',
      serialGroup: null,
      singleGroup: null,
      retriedFromId: null,
    });
    if (isFinal(state) && state !== 'EXCLUDED') {
      for (const type of options.steps ?? []) await ctx.store.deviceRuns.appendStep(deviceRun.id, type, ctx.clock());
      const { passed, failed } = options.testCases ?? { passed: 0, failed: 0 };
      await ctx.store.deviceRuns.finish(deviceRun.id, {
        state,
        endTime: ctx.clock(),
        counts: { all: passed + failed, passed, failed, skipped: 0 },
      });
    }
  }
  await refreshRunState(ctx.store, testRun.id, ctx.clock());
  return (await ctx.store.testRuns.findById(testRun.id))!;
}

/** An input file record with bytes in the blob store, as an upload would leave it. */
export async function file(
  ctx: Context,
  owner: { id: number },
  spec: {
    name: string;
    inputType: 'APPLICATION' | 'TEST' | 'DATA';
    osType?: 'ANDROID' | 'IOS' | null;
    properties?: Record<string, string>;
    bytes?: string | Buffer;
    /** A legacy project slot's upload, or (OUTPUT) an artifact of a device run. */
    project?: { id: number; slot: 'application' | 'test' | 'data' };
    outputOf?: number;
    /** Output tags, e.g. 'screenshot'. */
    tags?: string[];
  },
): Promise<UserFile> {
  const blob = await ctx.blobs.put(
    Readable.from([Buffer.isBuffer(spec.bytes) ? spec.bytes : Buffer.from(spec.bytes ?? `contents of ${spec.name}`)]),
    { maxBytes: 1e9 },
  );
  return ctx.store.files.insert({
    userId: owner.id,
    name: spec.name,
    size: blob.size,
    mimetype: 'application/octet-stream',
    sha256: blob.sha256,
    blobKey: blob.key,
    state: 'READY',
    direction: 'INPUT',
    inputType: spec.inputType,
    osType: spec.osType ?? null,
    duplicate: false,
    properties: spec.properties ?? {},
    tags: spec.tags ?? [],
    createTime: ctx.clock(),
    ...(spec.project !== undefined && { projectId: spec.project.id, projectSlot: spec.project.slot }),
    ...(spec.outputOf !== undefined && { deviceRunId: spec.outputOf, direction: 'OUTPUT', inputType: null }),
  });
}
