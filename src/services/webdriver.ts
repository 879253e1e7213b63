/**
 * Appium client side (docs/api.md#appium-client-side): a WebDriver client's session is a device
 * run of an Appium client side run. Its commands become rows (store/webdriver.ts) that the agent
 * holding the device takes from whichever server it polls and answers; the server that received
 * the command waits for the answer, woken through the notifier (PostgreSQL LISTEN/NOTIFY across
 * servers). The server never dials a device host.
 */
import { randomBytes } from 'node:crypto';
import type { Device } from '../domain/devices.ts';
import { AppError } from '../domain/errors.ts';
import { type DeviceRun, isFinal } from '../domain/runs.ts';
import { type RunRequest, sessionRunRequest } from '../domain/run-config.ts';
import type { RunSettings } from '../domain/run-settings.ts';
import { PLAN_PRIORITY, type User } from '../domain/users.ts';
import {
  SESSION_ID,
  type SessionRequest,
  type WebDriverCommand,
  WebDriverError,
  invalidSessionId,
  parseSessionRequest,
  sessionNotCreated,
} from '../domain/webdriver.ts';
import type { Context } from './context.ts';
import { type SentCommand, type WebDriverChannels, commandTopic } from './webdriver-channels.ts';
import { abortDeviceRuns, refreshRunState, wake } from './run-lifecycle.ts';
import { queueStatuses } from './queue-status.ts';
import { type DeviceRunScope, requireDeviceRun } from './runs.ts';
import { type PlannedDevice, planRun, startRun } from './start-run.ts';
import { authenticateApiKey } from './users.ts';

export const APPIUM_CLIENT_FRAMEWORK = { ANDROID: 3, IOS: 16 } as const;
/** How long a session waits in the queue by default before newSession fails (capability queueTimeout). */
export const DEFAULT_QUEUE_TIMEOUT_SECONDS = 300;
/** How long after its end a run named by `testrun` still takes new sessions of the same job. */
const JOIN_WINDOW_MS = 60 * 60_000;
/** How long a command waits for the device's answer before the client gets an error. */
const COMMAND_TIMEOUT_MS = 10 * 60_000;
/** How often a waiting server looks at the device run, in case a wake-up was lost or it ended. */
export const RECHECK_MS = 1000;
/** How long a command sent in memory may wait for the agent to take it before it goes through the database. */
const TAKE_MS = 2000;

export interface WebDriverAnswer {
  readonly status: number;
  /** JSON text, passed to the client unchanged. */
  readonly body: string;
}

export const answerTopic = (commandId: number) => `wd-answer:${commandId}`;

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
  const [{ device, excludeReason }] = plan.devices as [PlannedDevice];
  const deviceRun = await ctx.store.transaction(async (store) => {
    const inserted = await store.deviceRuns.insert({
      testRunId: run.id,
      projectId: project.id,
      userId: user.id,
      deviceId: device.id,
      state: excludeReason === null ? 'WAITING' : 'EXCLUDED',
      excludeReason,
      createTime: now,
      timeLimit: plan.timeout,
      retryState: 'NONE',
      autoRetriesLeftCount: 0,
      priority: PLAN_PRIORITY[user.plan],
      frameworkKind: plan.framework.kind,
      serialGroup: null,
      singleGroup: null,
      retriedFromId: null,
    });
    await refreshRunState(store, run.id, now);
    return inserted;
  });
  if (device.agentId !== null) wake(ctx, new Set([device.agentId]));
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

/** Any command of a started session, relayed to its device unchanged: in memory when its agent polls this server. */
export async function relay(
  ctx: Context,
  channels: WebDriverChannels,
  sessionId: string,
  method: string,
  path: string,
  body: string,
  signal: AbortSignal,
): Promise<WebDriverAnswer> {
  // A session whose agent polls this server was checked against the database before: its device
  // run is RUNNING for as long as the agent serves it (an ended one stops polling, and its
  // commands go to the database path below within TAKE_MS, where they meet the end).
  const known = channels.deviceRunOf(sessionId);
  let channel = known === undefined ? undefined : channels.live(known);
  let deviceRunId = known;
  if (channel === undefined) {
    const session = SESSION_ID.test(sessionId) ? await ctx.store.webDriver.session(sessionId) : undefined;
    if (session === undefined || session.endTime !== null) throw invalidSessionId(sessionId);
    const deviceRun = await ctx.store.deviceRuns.findById(session.deviceRunId);
    if (deviceRun === undefined || deviceRun.state !== 'RUNNING') throw ended(sessionId, deviceRun);
    deviceRunId = deviceRun.id;
    channel = channels.live(deviceRunId);
    if (channel !== undefined) channels.remember(sessionId, deviceRunId);
  }
  const command = { deviceRunId: deviceRunId!, method, path, body };
  const answer =
    (channel &&
      (await waitInMemory(
        ctx,
        channels.send(channel, { ...command, createTime: ctx.clock() }),
        sessionId,
        command,
        signal,
      ))) ??
    (await waitForAnswer(
      ctx,
      command.deviceRunId,
      await ctx.store.webDriver.insertCommand({ ...command, now: ctx.clock() }),
      signal,
      async () => undefined,
    ));
  if (method === 'DELETE' && path === `/session/${sessionId}`) {
    channels.detach(command.deviceRunId);
    await ctx.store.webDriver.endSession(sessionId, ctx.clock());
  }
  return answer;
}

/**
 * The answer to a command sent in memory; undefined when the agent did not take it within TAKE_MS
 * (it polls another server now, or stopped): the caller sends it through the database instead.
 * While the device works on it, the device run is looked at every second, as in waitForAnswer.
 */
async function waitInMemory(
  ctx: Context,
  sent: SentCommand,
  sessionId: string,
  command: { deviceRunId: number },
  signal: AbortSignal,
): Promise<WebDriverAnswer | undefined> {
  const started = Date.now();
  try {
    for (;;) {
      const stop = new AbortController();
      const tick = new Promise<undefined>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), RECHECK_MS);
        stop.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
      const answer = await Promise.race([sent.answer, tick, aborted(signal)]);
      stop.abort();
      if (answer !== undefined) return answer;
      if (signal.aborted) throw new WebDriverError('unknown error', 500, 'The client went away');
      if (Date.now() - started > TAKE_MS && sent.withdraw()) return undefined;
      const deviceRun = await ctx.store.deviceRuns.findById(command.deviceRunId);
      if (deviceRun === undefined || deviceRun.state !== 'RUNNING') throw ended(sessionId, deviceRun);
      if (Date.now() - started > COMMAND_TIMEOUT_MS)
        throw new WebDriverError('timeout', 500, `The device did not answer within ${COMMAND_TIMEOUT_MS / 1000} s`);
    }
  } finally {
    sent.forget();
  }
}

const aborted = (signal: AbortSignal) =>
  new Promise<undefined>((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });

function ended(sessionId: string, deviceRun: DeviceRun | undefined): WebDriverError {
  const why = deviceRun?.failReason ?? (deviceRun ? `its device run is ${deviceRun.state}` : 'it is gone');
  return new WebDriverError('invalid session id', 404, `The session ended (${why}); session id ${sessionId}`);
}

/**
 * Waits for the agent's answer to a command; the device run is looked at every second (`check` may
 * throw to give up), so a session whose device run ended (aborted, timed out, agent lost) answers
 * at once rather than at the command timeout.
 */
export async function waitForAnswer(
  ctx: Context,
  deviceRunId: number,
  commandId: number,
  signal: AbortSignal,
  check: (deviceRun: DeviceRun) => Promise<void>,
): Promise<WebDriverAnswer> {
  ctx.notifier.notify(commandTopic(deviceRunId));
  const deadline = Date.now() + COMMAND_TIMEOUT_MS;
  for (;;) {
    const wake = listen(ctx, answerTopic(commandId), RECHECK_MS, signal);
    try {
      const command = await ctx.store.webDriver.command(commandId);
      if (command?.state === 'ANSWERED') return { status: command.status!, body: command.answer! };
      if (signal.aborted) throw new WebDriverError('unknown error', 500, 'The client went away');
      const deviceRun = await ctx.store.deviceRuns.findById(deviceRunId);
      if (deviceRun === undefined || (deviceRun.state !== 'RUNNING' && deviceRun.state !== 'WAITING'))
        throw ended(String(commandId), deviceRun);
      await check(deviceRun);
      if (Date.now() > deadline)
        throw new WebDriverError('timeout', 500, `The device did not answer within ${COMMAND_TIMEOUT_MS / 1000} s`);
      await wake.woken;
    } finally {
      wake.cancel();
    }
  }
}

/**
 * Listens from now on, before the caller looks at the database: a wake-up that comes between the
 * look and the wait is not lost (it would cost the wait's whole timeout).
 */
export function listen(ctx: Context, topic: string, timeoutMs: number, signal: AbortSignal) {
  const stop = new AbortController();
  const woken = ctx.notifier.wait(topic, timeoutMs, AbortSignal.any([signal, stop.signal]));
  return { woken, cancel: () => stop.abort() };
}

/** The command log of a device session (GET …/device-sessions/{id}/commands). */
export async function deviceRunCommands(
  ctx: Context,
  user: User,
  id: number,
  page: { offset: number; limit: number },
  scope?: DeviceRunScope,
): Promise<{ rows: WebDriverCommand[]; total: number; sessionId: string | null }> {
  const deviceRun = await requireDeviceRun(ctx, user, id, scope, 'read');
  const session = await ctx.store.webDriver.sessionOfDeviceRun(deviceRun.id);
  const { rows, total } = await ctx.store.webDriver.commands(deviceRun.id, page.offset, page.limit);
  return { rows, total, sessionId: session?.id ?? null };
}
