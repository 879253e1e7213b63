/**
 * Appium client side's sessions (docs/api.md#appium-client-side): `POST /wd/hub/session` queues a
 * device run for the session, in a run of its own or in the CI job's run named by `testrun`, on the
 * device named or the freest of the platform's, and answers once the device's Appium server has
 * started it. Its commands are relayed by services/webdriver.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Device } from '../domain/devices.ts';
import { AppError } from '../domain/errors.ts';
import { type DeviceRun, isFinal } from '../domain/runs.ts';
import { type RunRequest, sessionRunRequest } from '../domain/run-config.ts';
import type { RunSettings } from '../domain/run-settings.ts';
import type { User } from '../domain/users.ts';
import { type SessionRequest, WebDriverError, parseSessionRequest, sessionNotCreated } from '../domain/webdriver.ts';
import type { Context } from './context.ts';
import { abortDeviceRuns, refreshRunState, wake } from './run-lifecycle.ts';
import { queueStatuses } from './queue-status.ts';
import { type PlannedDevice, plannedDeviceRun, planRun, startRun } from './start-run.ts';
import { authenticateApiKey } from './users.ts';
import { type WebDriverAnswer, waitForAnswer } from './webdriver.ts';

export const APPIUM_CLIENT_FRAMEWORK = { ANDROID: 3, IOS: 16 } as const;
/** How long a session waits in the queue by default before newSession fails (capability queueTimeout). */
export const DEFAULT_QUEUE_TIMEOUT_SECONDS = 300;
/** How long after its end a run named by `testrun` still takes new sessions of the same job. */
const JOIN_WINDOW_MS = 60 * 60_000;

/** `POST /wd/hub/session`: queues a device run for the session and answers once the device's Appium server has started it. */
export async function newSession(ctx: Context, body: unknown, signal: AbortSignal): Promise<WebDriverAnswer> {
  const request = parseSessionRequest(body);
  const user = await authenticateApiKey(ctx, request.apiKey);
  if (user === undefined)
    throw sessionNotCreated('The API key in "bitbar:options" (apiKey) is not valid: copy it from your account page');
  const device = await chooseDevice(ctx, user, request);
  const runRequest = sessionRunRequest({
    osType: request.osType,
    frameworkId: APPIUM_CLIENT_FRAMEWORK[request.osType],
    projectName: request.project ?? `Appium ${request.osType === 'IOS' ? 'iOS' : 'Android'}`,
    deviceIds: [device.id],
    files: request.app === null ? [] : [{ id: request.app, action: 'INSTALL' }],
    testRunName: request.testrun,
    timeout: request.testTimeout,
    client: 'api',
  });
  let deviceRun: DeviceRun;
  try {
    deviceRun = (await joinRun(ctx, user, runRequest)) ?? (await firstOfNewRun(ctx, user, runRequest));
  } catch (error) {
    if (error instanceof AppError) throw sessionNotCreated(error.message.replace(/^File (\d+)/, 'App (file $1)'));
    throw error;
  }
  if (deviceRun.state === 'EXCLUDED')
    throw sessionNotCreated(`${device.displayName} cannot run Appium client side sessions`);

  const sessionId = randomBytes(16).toString('hex');
  await ctx.store.webDriver.insertSession({
    id: sessionId,
    deviceRunId: deviceRun.id,
    userId: user.id,
    createTime: ctx.clock(),
    endTime: null,
  });
  const commandId = await ctx.store.webDriver.insertCommand({
    deviceRunId: deviceRun.id,
    method: 'POST',
    path: '/session',
    body: JSON.stringify({ capabilities: { alwaysMatch: request.capabilities, firstMatch: [{}] } }),
    now: ctx.clock(),
  });
  const queueDeadline = Date.now() + (request.queueTimeout ?? DEFAULT_QUEUE_TIMEOUT_SECONDS) * 1000;
  let answer: WebDriverAnswer;
  try {
    answer = await waitForAnswer(ctx, deviceRun.id, commandId, signal, async (current) => {
      if (current.state !== 'WAITING' || Date.now() < queueDeadline) return;
      const status = (await queueStatuses(ctx.store, [current.testRunId])).get(current.testRunId);
      throw sessionNotCreated(
        `No device became free within ${request.queueTimeout ?? DEFAULT_QUEUE_TIMEOUT_SECONDS} s (capability queueTimeout)` +
          (status?.message ? `: ${status.message}` : ''),
      );
    });
  } catch (error) {
    // The client gave up or the queue timed out: the device run must not start for nobody.
    await endSession(ctx, sessionId, deviceRun.id);
    if (error instanceof WebDriverError && error.error === 'invalid session id')
      throw sessionNotCreated(error.message.replace(/^The session ended/, 'The session could not start'));
    throw error;
  }
  if (answer.status !== 200) {
    await endSession(ctx, sessionId, deviceRun.id);
    return answer;
  }
  return { status: 200, body: withSessionId(answer.body, sessionId) };
}

async function firstOfNewRun(ctx: Context, user: User, request: RunRequest): Promise<DeviceRun> {
  const run = await startRun(ctx, user, request);
  const [deviceRun] = await ctx.store.deviceRuns.currentOfRun(run.run.id);
  if (deviceRun === undefined) throw new Error(`run ${run.run.id} has no device run`);
  return deviceRun;
}

/**
 * Sessions of one CI job land in one run: a session naming a run (`testrun`) of its project that
 * its earlier sessions started, on the same app, joins it as one more device run, unless that run
 * finished more than JOIN_WINDOW_MS ago. Everything is checked as for a new run first.
 */
async function joinRun(ctx: Context, user: User, request: RunRequest): Promise<DeviceRun | undefined> {
  if (request.testRunName === null) return undefined;
  const plan = await planRun(ctx, user, request);
  const project = plan.project;
  if (!('id' in project)) return undefined;
  const now = ctx.clock();
  const run = await ctx.store.webDriver.joinableRun(
    project.id,
    request.testRunName,
    plan.framework.id,
    now - JOIN_WINDOW_MS,
  );
  if (run === undefined) return undefined;
  const files = plan.files.map((entry) => ({ id: entry.file.id, action: entry.action }));
  if (JSON.stringify((JSON.parse(run.config) as RunSettings).files) !== JSON.stringify(files)) return undefined;
  const [planned] = plan.devices as [PlannedDevice];
  const deviceRun = await ctx.store.transaction(async (store) => {
    // A session's plan keeps the defaults: no automatic retries, the PARALLEL scheduler.
    const inserted = await store.deviceRuns.insert(
      plannedDeviceRun(plan, { id: run.id, projectId: project.id }, user, planned, now),
    );
    await refreshRunState(store, run.id, now);
    return inserted;
  });
  if (planned.device.agentId !== null) wake(ctx, new Set([planned.device.agentId]));
  return deviceRun;
}

/** The device the session runs on: the one named, or (findDevice, or none named) the freest of the platform's. */
async function chooseDevice(ctx: Context, user: User, request: SessionRequest): Promise<Device> {
  const group = await ctx.store.devices.defaultGroup(user.id, request.osType);
  const devices = group === undefined ? [] : await ctx.store.devices.devicesOfGroup(group.id);
  const able = devices.filter((device) => device.enabled && device.executionKinds.includes('appium-client'));
  if (request.device !== null && !request.findDevice) {
    const wanted = request.device.toLowerCase();
    const named = devices.find(
      (device) => String(device.id) === request.device || device.displayName.toLowerCase() === wanted,
    );
    if (named === undefined)
      throw sessionNotCreated(
        `No ${request.osType} device is named ${JSON.stringify(request.device)} (capability device); GET /api/v2/devices lists them, or set findDevice: true`,
      );
    if (!able.includes(named))
      throw sessionNotCreated(`${named.displayName} cannot run Appium client side sessions (capability device)`);
    return named;
  }
  const rank = (device: Device) => (device.online ? 0 : 2) + (device.state === 'IDLE' ? 0 : 1);
  const [best] = able
    .filter(
      (device) => request.device === null || device.displayName.toLowerCase().includes(request.device.toLowerCase()),
    )
    .sort((a, b) => rank(a) - rank(b) || a.id - b.id);
  if (best === undefined)
    throw sessionNotCreated(
      `No ${request.osType} device${request.device === null ? '' : ` matching ${JSON.stringify(request.device)}`} can run Appium client side sessions`,
    );
  return best;
}

/** A W3C new-session answer carries the device's session id: the client gets the cloud's. */
function withSessionId(body: string, sessionId: string): string {
  const answer = JSON.parse(body) as { sessionId?: string; value?: { sessionId?: string } };
  if (typeof answer.value === 'object' && answer.value !== null) answer.value.sessionId = sessionId;
  if ('sessionId' in answer) answer.sessionId = sessionId;
  return JSON.stringify(answer);
}

/** The session ended from the client's side: its device run ends (aborted) if it has not already. */
async function endSession(ctx: Context, sessionId: string, deviceRunId: number): Promise<void> {
  await ctx.store.webDriver.endSession(sessionId, ctx.clock());
  const deviceRun = await ctx.store.deviceRuns.findById(deviceRunId);
  if (deviceRun !== undefined && !isFinal(deviceRun.state)) await abortDeviceRuns(ctx, [deviceRun]);
}
