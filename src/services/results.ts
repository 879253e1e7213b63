/** Reading what device runs produced: test cases, samples, screenshots, logs and other outputs. */
import { NotFoundError } from '../domain/errors.ts';
import type { UserFile } from '../domain/files.ts';
import type { User } from '../domain/users.ts';
import type { StoredSample } from '../domain/runs.ts';
import type { StoredTestCase } from '../domain/test-cases.ts';
import { flakyTestKey } from '../domain/flaky-tests.ts';
import type { Context } from './context.ts';
import type { TestCaseRunView } from './views.ts';
import { type Download, openFile } from './files.ts';
import { type DeviceRunScope, requireDeviceRun } from './runs.ts';

export async function testCaseRuns(
  ctx: Context,
  user: User,
  deviceRunId: number,
  scope?: DeviceRunScope,
): Promise<StoredTestCase[]> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope, 'read');
  return ctx.store.results.testCases(deviceRun.id);
}

/** The session's test case results with their `flaky` flag, computed as the project's flaky-tests list is. */
export async function testCaseRunViews(
  ctx: Context,
  user: User,
  deviceRunId: number,
  scope?: DeviceRunScope,
): Promise<TestCaseRunView[]> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope, 'read');
  const cases = await ctx.store.results.testCases(deviceRun.id);
  if (cases.length === 0) return [];
  const flaky = await ctx.store.flakyTests.flakyInSession(deviceRun.projectId, deviceRun.id);
  return cases.map((testCase) => ({
    testCase,
    flaky: flaky.has(flakyTestKey(testCase.className, testCase.methodName)),
  }));
}

export async function performance(
  ctx: Context,
  user: User,
  deviceRunId: number,
  scope?: DeviceRunScope,
): Promise<StoredSample[]> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope, 'read');
  return ctx.store.results.samples(deviceRun.id);
}

export async function outputFiles(
  ctx: Context,
  user: User,
  deviceRunId: number,
  tags: readonly string[],
  scope?: DeviceRunScope,
): Promise<UserFile[]> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope, 'read');
  return ctx.store.files.outputsOf(deviceRun.id, tags);
}

export async function openOutput(
  ctx: Context,
  user: User,
  deviceRunId: number,
  fileId: number,
  scope?: DeviceRunScope,
  tag?: string,
): Promise<Download> {
  const deviceRun = await requireDeviceRun(ctx, user, deviceRunId, scope, 'read');
  const file = await ctx.store.files.findOutput(deviceRun.id, fileId);
  if (file === undefined || (tag !== undefined && !file.tags.includes(tag)))
    throw new NotFoundError(tag === 'screenshot' ? 'Screenshot' : 'File', fileId);
  return openFile(ctx, file);
}

/** The device run's logs, in the order they were stored (none yet: an empty list). */
export async function logFiles(
  ctx: Context,
  user: User,
  deviceRunId: number,
  scope?: DeviceRunScope,
): Promise<Download[]> {
  const files = await outputFiles(ctx, user, deviceRunId, ['logs'], scope);
  return files.map((file) => openFile(ctx, file));
}
