/**
 * Appium client side (docs/api.md#appium-client-side): the commands of a started session
 * (services/webdriver-sessions.ts starts it), relayed to its device. They go in memory to the agent
 * when it polls this server, or become rows (store/webdriver.ts) that the agent takes from whichever
 * server it polls and answers; the server that received the command waits for the answer, woken
 * through the notifier (PostgreSQL LISTEN/NOTIFY across servers). The server never dials a host.
 */
import type { DeviceRun } from '../domain/runs.ts';
import type { User } from '../domain/users.ts';
import { SESSION_ID, type WebDriverCommand, WebDriverError, invalidSessionId } from '../domain/webdriver.ts';
import type { Context } from './context.ts';
import { type LocalCommand, type SentCommand, type WebDriverChannels, commandTopic } from './webdriver-channels.ts';
import { type DeviceRunScope, requireDeviceRun } from './runs.ts';

/** How long a command waits for the device's answer before the client gets an error. */
const COMMAND_TIMEOUT_MS = 10 * 60_000;
/** How often a waiting server looks at the device run, in case a wake-up was lost or it ended. */
export const RECHECK_MS = 1000;
/**
 * How long a command sent in memory may wait for the agent to take it before it goes through the
 * database: when the agent's poll waited here, it takes it at once (unless the poll broke); when the
 * agent was between two polls, its next one may come here (it answered here a moment ago) or reach
 * another server (a load balancer without affinity), which finds the command in the database.
 */
const TAKE_MS = { polled: 2000, betweenPolls: 100 } as const;

export interface WebDriverAnswer {
  readonly status: number;
  /** JSON text, passed to the client unchanged. */
  readonly body: string;
}

export const answerTopic = (commandId: number) => `wd-answer:${commandId}`;

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
        channels,
        channels.send(channel, { ...command, createTime: ctx.clock() }),
        sessionId,
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
    await ctx.store.webDriver.dropHandoffs(command.deviceRunId);
  }
  return answer;
}

/**
 * The answer to a command sent in memory; undefined when the agent did not take it in time
 * (TAKE_MS: it polls another server now, or stopped): the caller sends it through the database instead.
 * The answer comes in memory, or, when the agent's answer reached another server, handed over
 * through the database (woken by the notifier). While the device works on it, the device run is
 * looked at every second, as in waitForAnswer.
 */
async function waitInMemory(
  ctx: Context,
  channels: WebDriverChannels,
  sent: SentCommand,
  sessionId: string,
  signal: AbortSignal,
): Promise<WebDriverAnswer | undefined> {
  const { id, deviceRunId } = sent.command;
  const started = Date.now();
  const takeBy = started + (sent.polled ? TAKE_MS.polled : TAKE_MS.betweenPolls);
  try {
    for (;;) {
      const waitMs = sent.queued() ? Math.max(1, Math.min(RECHECK_MS, takeBy - Date.now())) : RECHECK_MS;
      const wake = ctx.notifier.listen(answerTopic(id), waitMs, signal);
      const answer = await Promise.race([sent.answer, wake.woken]);
      wake.cancel();
      if (typeof answer === 'object') return answer;
      if (signal.aborted) throw new WebDriverError('unknown error', 500, 'The client went away');
      if (Date.now() >= takeBy && sent.withdraw()) return undefined;
      const handed = await ctx.store.webDriver.takeHandoff(id, deviceRunId);
      if (handed !== undefined) {
        const write = logRelayed(channels, sent.command, handed, ctx.clock());
        if (isLastCommand(sent.command)) await write.this;
        return handed;
      }
      // A live agent sends its server heartbeats, also while a command runs, and one silent for a
      // lease is taken as lost (jobs/reaper.ts). One silent here has moved to another server (it
      // lost its way here), where its answer reaches no one, or it never got the command: either
      // way no answer comes here.
      if (sent.away() > ctx.limits.leaseMs)
        throw new WebDriverError(
          'unknown error',
          500,
          'The device host stopped reaching this server while this command was on its way: its answer is lost, whether or not it ran; the session goes on through the other servers',
        );
      const deviceRun = await ctx.store.deviceRuns.findById(deviceRunId);
      if (deviceRun === undefined || deviceRun.state !== 'RUNNING') throw ended(sessionId, deviceRun);
      if (Date.now() - started > COMMAND_TIMEOUT_MS)
        throw new WebDriverError('timeout', 500, `The device did not answer within ${COMMAND_TIMEOUT_MS / 1000} s`);
    }
  } finally {
    sent.forget();
  }
}

/** The session's last command: its log must be written before the device run ends. */
export const isLastCommand = (command: { method: string; path: string }) =>
  command.method === 'DELETE' && /^\/session\/[^/]+$/.test(command.path);

/**
 * Logs a command relayed in memory, once answered, behind the device run's earlier ones
 * (services/webdriver-log.ts); the session's last command is written at once.
 */
export function logRelayed(channels: WebDriverChannels, command: LocalCommand, answer: WebDriverAnswer, now: number) {
  return channels.logAfter(
    {
      deviceRunId: command.deviceRunId,
      method: command.method,
      path: command.path,
      body: command.body,
      status: answer.status,
      answer: answer.body,
      createTime: command.createTime,
      answerTime: now,
    },
    isLastCommand(command),
  );
}

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
    const wake = ctx.notifier.listen(answerTopic(commandId), RECHECK_MS, signal);
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
