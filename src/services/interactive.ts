/**
 * Interactive sessions (docs/api.md#interactive-sessions): a device reserved for a user, who sees
 * its screen live and sends it input. The Appium client side machinery carries it (services/
 * webdriver.ts): the session is a device run of a run of its own, queued like any (plan
 * priority), ended by its time limit, its idle timeout (the agent keeps it), the user's release
 * or a lost agent, and the device is cleaned after it like after any run. Each input is a command
 * row the agent holding the device takes from whichever server it polls, and the rows are the
 * session's log. Frames come the same way round: the agent pushes them (store/live-frames.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Agent } from '../domain/agents.ts';
import { AppError, ConflictError, InvalidParameterError, NotFoundError } from '../domain/errors.ts';
import {
  IDLE_PARAMETER,
  INTERACTIVE_FRAMEWORK,
  INTERACTIVE_PROJECT,
  type Input,
  idleTimeout,
  parseInput,
  sessionLength,
} from '../domain/interactive.ts';
import { sessionRunRequest } from '../domain/run-config.ts';
import { type DeviceRun, isFinal } from '../domain/runs.ts';
import type { User } from '../domain/users.ts';
import { WebDriverError, type WebDriverCommand } from '../domain/webdriver.ts';
import type { LiveFrame } from '../store/live-frames.ts';
import { PROTOCOL_PREFIX } from '../protocol/v1.ts';
import type { Context } from './context.ts';
import { requireFile } from './files.ts';
import { abortDeviceRuns } from './run-lifecycle.ts';
import { getDeviceRun, requireDeviceRun } from './runs.ts';
import { startRun } from './start-run.ts';
import type { DeviceRunView } from './views.ts';
import { commandTopic } from './webdriver-channels.ts';
import { waitForAnswer } from './webdriver.ts';

export const INPUT_PATH = '/interactive';
const frameTopic = (deviceRunId: number) => `live-frame:${deviceRunId}`;
const logTopic = (deviceRunId: number) => `live-log:${deviceRunId}`;
/** How often a viewer looks at the session's state, in case it ended without a frame. */
const VIEWER_RECHECK_MS = 1000;

export interface SessionRequest {
  readonly deviceId?: number;
  readonly deviceModelId?: number;
  readonly timeout?: number;
  readonly idleTimeout?: number;
}

/** `POST /me/device-sessions`: queues the session's device run; answers it WAITING (or RUNNING). */
export async function startInteractiveSession(
  ctx: Context,
  user: User,
  request: SessionRequest,
): Promise<DeviceRunView> {
  const deviceId = request.deviceId ?? request.deviceModelId;
  if (deviceId === undefined)
    throw new InvalidParameterError(
      'deviceId',
      `Parameter 'deviceId' (or 'deviceModelId') is required: the device to reserve; GET /api/v2/devices lists them`,
    );
  const device = await ctx.store.devices.findById(deviceId);
  if (device === undefined) throw new NotFoundError('Device', deviceId);
  if (!device.enabled || !device.executionKinds.includes('interactive'))
    throw new InvalidParameterError(
      'deviceId',
      `${device.displayName} cannot hold interactive sessions${device.enabled ? '' : ' (taken out of service)'}`,
    );
  const length = sessionLength(user.plan, request.timeout);
  const idle = idleTimeout(request.idleTimeout, length);
  const runRequest = sessionRunRequest({
    osType: device.osType,
    frameworkId: INTERACTIVE_FRAMEWORK[device.osType],
    projectName: INTERACTIVE_PROJECT,
    deviceIds: [device.id],
    testRunName: `Interactive session on ${device.displayName}`,
    timeout: length,
    testRunParameters: [{ key: IDLE_PARAMETER, value: String(idle) }],
    client: 'interactive',
  });
  const run = await startRun(ctx, user, runRequest);
  const [deviceRun] = await ctx.store.deviceRuns.currentOfRun(run.run.id);
  if (deviceRun === undefined) throw new Error(`run ${run.run.id} has no device run`);
  // The relay's session row: its end is the release the agent waits for.
  await ctx.store.webDriver.insertSession({
    id: randomBytes(16).toString('hex'),
    deviceRunId: deviceRun.id,
    userId: user.id,
    createTime: ctx.clock(),
    endTime: null,
  });
  return getDeviceRun(ctx, user, deviceRun.id);
}

/**
 * The user's interactive session; with `admin`, an admin reaches anyone's. Another user's device
 * session is not found; the user's own automatic one is a 409 (`automatic: 'refuse'`) or is
 * answered as it is (`'allow'`: its live screen is an empty stream).
 */
export async function requireSession(
  ctx: Context,
  user: User,
  id: number,
  options: { admin?: boolean; automatic: 'allow' | 'refuse' },
): Promise<DeviceRun> {
  // Those who may read an automatic session (a shared project's) see its (empty) live screen;
  // an interactive one is its holder's alone.
  const deviceRun =
    options.admin === true && user.role === 'ADMIN'
      ? await ctx.store.deviceRuns.findById(id)
      : await requireDeviceRun(ctx, user, id, {}, options.automatic === 'allow' ? 'read' : 'change').catch(
          () => undefined,
        );
  if (deviceRun === undefined) throw new NotFoundError('Device session', id);
  if (deviceRun.frameworkKind === 'interactive') {
    if (deviceRun.userId !== user.id && options.admin !== true) throw new NotFoundError('Device session', id);
    return deviceRun;
  }
  if (options.automatic === 'allow') return deviceRun;
  if (deviceRun.userId !== user.id) throw new NotFoundError('Device session', id);
  throw new ConflictError(
    `Device session ${id} is a session of test run ${deviceRun.testRunId}, not an interactive session (POST /me/device-sessions starts one)`,
  );
}

/** Ends the session: a waiting one leaves the queue, a running one ends and its device is cleaned. */
export async function releaseInteractiveSession(ctx: Context, user: User, id: number): Promise<DeviceRunView> {
  const deviceRun = await requireSession(ctx, user, id, { admin: true, automatic: 'refuse' });
  if (!isFinal(deviceRun.state)) {
    const session = await ctx.store.webDriver.sessionOfDeviceRun(deviceRun.id);
    const now = ctx.clock();
    const logged = await ctx.store.webDriver.insertCommand({
      deviceRunId: deviceRun.id,
      method: 'POST',
      path: `${INPUT_PATH}/release`,
      body: JSON.stringify({ action: 'release', by: user.id === deviceRun.userId ? 'holder' : 'admin' }),
      now,
    });
    await ctx.store.webDriver.answer(logged, deviceRun.id, 200, '{"value":null}', now);
    if (deviceRun.state === 'WAITING' || session === undefined) await abortDeviceRuns(ctx, [deviceRun]);
    else {
      await ctx.store.webDriver.endSession(session.id, now);
      ctx.notifier.notify(commandTopic(deviceRun.id));
    }
  }
  // An admin who ended another user's session is answered the session as its holder sees it.
  return getDeviceRun(ctx, { ...user, id: deviceRun.userId }, deviceRun.id);
}

/** Relays one input to the device and answers the logged command once the device has done it. */
export async function sendInput(
  ctx: Context,
  user: User,
  id: number,
  raw: Readonly<Record<string, unknown>>,
  signal: AbortSignal,
): Promise<WebDriverCommand> {
  // Another user's session is a 404 whatever the input (docs/api.md#formats).
  const deviceRun = await requireSession(ctx, user, id, { automatic: 'refuse' });
  const input = parseInput(raw);
  const { commandId } = await relayInput(ctx, user, deviceRun, input, signal);
  return (await ctx.store.webDriver.command(commandId))!;
}

/** A screenshot taken now by the device (PNG). */
export async function takeScreenshot(ctx: Context, user: User, id: number, signal: AbortSignal): Promise<Buffer> {
  const deviceRun = await requireSession(ctx, user, id, { automatic: 'refuse' });
  const { value } = await relayInput(ctx, user, deviceRun, { action: 'screenshot' }, signal);
  if (typeof value !== 'string') throw new AppError('UNAVAILABLE', 503, 'The device sent no screenshot; try again');
  return Buffer.from(value, 'base64');
}

async function relayInput(
  ctx: Context,
  user: User,
  deviceRun: DeviceRun,
  input: Input,
  signal: AbortSignal,
): Promise<{ commandId: number; value: unknown }> {
  if (deviceRun.state !== 'RUNNING')
    throw new ConflictError(
      `Interactive session ${deviceRun.id} is ${deviceRun.state}: the device takes input while the session is RUNNING`,
    );
  let body: Record<string, unknown> = { ...input };
  if (input.action === 'install') {
    const file = await requireFile(ctx, user, input.fileId);
    const wanted = deviceRun.frameworkKind === 'interactive' ? await osOf(ctx, deviceRun) : null;
    if (file.inputType !== 'APPLICATION' || (wanted !== null && file.osType !== null && file.osType !== wanted))
      throw new InvalidParameterError(
        'fileId',
        `File ${file.id} (${file.name}) is not ${wanted === 'IOS' ? 'an iOS app (.ipa)' : 'an Android app (.apk)'}`,
      );
    body = {
      ...body,
      install: {
        url: `${PROTOCOL_PREFIX}/device-runs/${deviceRun.id}/files/${file.id}`,
        name: file.name,
        properties: file.properties,
      },
    };
  }
  const commandId = await ctx.store.webDriver.insertCommand({
    deviceRunId: deviceRun.id,
    method: 'POST',
    path: `${INPUT_PATH}/${input.action}`,
    body: JSON.stringify(body),
    now: ctx.clock(),
  });
  let answer;
  try {
    answer = await waitForAnswer(ctx, deviceRun.id, commandId, signal, async () => undefined);
  } catch (error) {
    if (error instanceof WebDriverError)
      throw new ConflictError(`Interactive session ${deviceRun.id} ended before the device answered`);
    throw error;
  }
  const reply = JSON.parse(answer.body) as { value?: unknown };
  const message = (reply.value as { message?: unknown } | null)?.message;
  if (answer.status >= 400 && answer.status < 500)
    throw new InvalidParameterError(
      input.action === 'tap' || input.action === 'longPress' || input.action === 'swipe' ? 'x' : 'action',
      String(message ?? 'The device refused the input'),
    );
  if (answer.status >= 500)
    throw new AppError('UNAVAILABLE', 503, `The device could not do it: ${String(message ?? answer.status)}`);
  return { commandId, value: reply.value };
}

async function osOf(ctx: Context, deviceRun: DeviceRun): Promise<'ANDROID' | 'IOS' | null> {
  return (await ctx.store.devices.findById(deviceRun.deviceId))?.osType ?? null;
}

/** Files an input of the session asked the device to install: the agent may download them. */
export async function installedByInput(ctx: Context, deviceRunId: number, fileId: number): Promise<boolean> {
  const { rows } = await ctx.store.webDriver.commands(deviceRunId, 0, 10_000);
  return rows.some(
    (row) => row.path === `${INPUT_PATH}/install` && (JSON.parse(row.body) as { fileId?: unknown }).fileId === fileId,
  );
}

/** A frame the agent pushed: kept as the session's newest, and every viewer woken. */
export async function storeFrame(
  ctx: Context,
  agent: Agent,
  deviceRunId: number,
  frame: { mediaType: string; bytes: Buffer; time: number },
): Promise<{ seq: number; ended: boolean }> {
  const deviceRun = await ctx.store.deviceRuns.findById(deviceRunId);
  if (deviceRun === undefined || deviceRun.agentId !== agent.id || deviceRun.frameworkKind !== 'interactive')
    throw new ConflictError(`Device run ${deviceRunId} is not an interactive session held by this agent`);
  if (deviceRun.state !== 'RUNNING') return { seq: 0, ended: true };
  const seq = await ctx.store.liveFrames.put(deviceRunId, frame.mediaType, frame.bytes, frame.time, ctx.clock());
  ctx.notifier.notify(frameTopic(deviceRunId));
  return { seq, ended: false };
}

/** Lines of the device's log the agent read: kept, and every reader woken. */
export async function storeLogLines(
  ctx: Context,
  agent: Agent,
  deviceRunId: number,
  lines: readonly string[],
): Promise<{ ended: boolean }> {
  const deviceRun = await ctx.store.deviceRuns.findById(deviceRunId);
  if (deviceRun === undefined || deviceRun.agentId !== agent.id || deviceRun.frameworkKind !== 'interactive')
    throw new ConflictError(`Device run ${deviceRunId} is not an interactive session held by this agent`);
  if (deviceRun.state !== 'RUNNING') return { ended: true };
  await ctx.store.liveFrames.appendLines(deviceRunId, lines);
  ctx.notifier.notify(logTopic(deviceRunId));
  return { ended: false };
}

/** The device's log from the session's start, then as it comes, until the session ends (at once for an automatic one). */
export async function readSessionLog(
  ctx: Context,
  user: User,
  id: number,
): Promise<{ lines: (signal: AbortSignal) => AsyncGenerator<string[]> }> {
  const deviceRun = await requireSession(ctx, user, id, { automatic: 'allow' });
  return {
    async *lines(signal) {
      if (deviceRun.frameworkKind !== 'interactive') return;
      let lastId = 0;
      let over = false;
      while (!signal.aborted) {
        const wake = ctx.notifier.listen(logTopic(deviceRun.id), VIEWER_RECHECK_MS, signal);
        try {
          const read = await ctx.store.liveFrames.linesAfter(deviceRun.id, lastId);
          lastId = read.lastId;
          if (read.lines.length > 0) {
            yield read.lines;
            continue;
          }
          // The lines sent before the end are read before the stream ends.
          if (over) return;
          const current = await ctx.store.deviceRuns.findById(deviceRun.id);
          if (current === undefined || isFinal(current.state)) {
            over = true;
            continue;
          }
          await wake.woken;
        } finally {
          wake.cancel();
        }
      }
    },
  };
}

/**
 * The session's screen as it changes, for one viewer: the newest frame at once, then each newer
 * one, until the session ends or `signal` aborts (at once for an automatic session). Another
 * user's session is not found.
 */
export async function watchSession(
  ctx: Context,
  user: User,
  id: number,
): Promise<{ frames: (signal: AbortSignal) => AsyncGenerator<LiveFrame> }> {
  const deviceRun = await requireSession(ctx, user, id, { automatic: 'allow' });
  return {
    async *frames(signal) {
      if (deviceRun.frameworkKind !== 'interactive') return;
      let seq = 0;
      let checked = 0;
      while (!signal.aborted) {
        const wake = ctx.notifier.listen(frameTopic(deviceRun.id), VIEWER_RECHECK_MS, signal);
        try {
          const frame = await ctx.store.liveFrames.newest(deviceRun.id, seq);
          if (frame !== undefined) {
            seq = frame.seq;
            yield frame;
            continue;
          }
          if (Date.now() - checked >= VIEWER_RECHECK_MS) {
            checked = Date.now();
            const current = await ctx.store.deviceRuns.findById(deviceRun.id);
            if (current === undefined || isFinal(current.state)) return;
          }
          await wake.woken;
        } finally {
          wake.cancel();
        }
      }
    },
  };
}
