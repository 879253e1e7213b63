/**
 * The agent's side of Appium client side (docs/api.md#appium-client-side): its long poll for the
 * commands of a session it holds, and its answers. Commands sent to this server while the agent
 * polls here come in memory (services/webdriver-channels.ts); those sent to other servers, through
 * the database, woken by the notifier.
 */
import type { Agent } from '../domain/agents.ts';
import { ConflictError } from '../domain/errors.ts';
import type { DeviceRun } from '../domain/runs.ts';
import type { WebDriverAnswerResponse } from '../protocol/v1.ts';
import type { Context } from './context.ts';
import { type WebDriverChannels, commandTopic, isMemoryCommand } from './webdriver-channels.ts';
import { RECHECK_MS, answerTopic, isLastCommand, logRelayed } from './webdriver.ts';

/** How often a poll looks at the database when nothing wakes it, to see whether the session is over. */
const LOOK_MS = RECHECK_MS * 5;

interface PolledCommand {
  readonly id: number;
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

/** The agent's long poll for the commands of a session it holds; `ended` once the session is over. */
export async function takeCommands(
  ctx: Context,
  channels: WebDriverChannels,
  agent: Agent,
  deviceRunId: number,
  waitMs: number,
  signal: AbortSignal,
): Promise<{ commands: PolledCommand[]; ended: boolean }> {
  // The fast path, for an agent this server has checked: commands in memory, or a wait for them,
  // as long as nothing waits in the database and it was looked at a moment ago.
  const started = Date.now();
  const known = channels.of(deviceRunId, agent.id);
  if (known !== undefined && !known.dirty && started - known.checked < LOOK_MS) {
    if (known.queue.length === 0 && waitMs > 0 && !signal.aborted) {
      // Woken by a command sent here, the poll's end, or the time to look at the database: a plain
      // callback, as an AbortController per command cost a DOMException (and its stack) each.
      await new Promise<void>((resolve) => {
        const quit = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', quit);
          known.wake = null;
          resolve();
        };
        const timer = setTimeout(quit, Math.min(waitMs, LOOK_MS - (started - known.checked)));
        signal.addEventListener('abort', quit, { once: true });
        known.wake = quit;
      });
      known.lastSeen = Date.now();
    }
    if (known.queue.length > 0) return { commands: strip(channels.take(known)), ended: false };
    if (signal.aborted) return { commands: [], ended: false };
  }

  const deadline = started + waitMs;
  for (;;) {
    const timeoutMs = Math.max(0, Math.min(deadline - Date.now(), LOOK_MS));
    const wake = ctx.notifier.listen(commandTopic(deviceRunId), timeoutMs, signal);
    let channel;
    try {
      const deviceRun = await requireHeldRun(ctx, agent, deviceRunId);
      channel = channels.attach(deviceRunId, agent.id);
      const local = new Promise<void>((resolve) => (channel!.wake = resolve));
      channel.dirty = false;
      channel.checked = Date.now();
      const taken = await ctx.store.webDriver.takePending(deviceRunId);
      const commands = [...taken, ...channels.take(channel)];
      const session = await ctx.store.webDriver.sessionOfDeviceRun(deviceRunId).catch(async (error: unknown) => {
        await giveBackCommands(ctx, channels, deviceRunId, commands).catch(() => undefined);
        throw error;
      });
      // An interactive session's row may come a moment after its device run was claimed
      // (services/interactive.ts): only its end, or its device run's, ends it.
      const over =
        deviceRun.state !== 'RUNNING' ||
        (session === undefined ? deviceRun.frameworkKind !== 'interactive' : session.endTime !== null);
      if (over) channels.detach(deviceRunId);
      if (commands.length > 0 || over || Date.now() >= deadline || signal.aborted)
        return { commands: strip(commands), ended: over };
      await Promise.race([wake.woken, local]);
    } finally {
      wake.cancel();
      if (channel !== undefined) {
        channel.wake = null;
        channel.lastSeen = Date.now();
      }
    }
  }
}

/**
 * Commands a poll took but could not hand to the agent (it hung up before the answer left, its
 * socket closed, the poll failed after taking them): the agent's next poll, here or on another
 * server, takes them again. Without this a command would wait unanswered until its client gave up.
 */
export async function giveBackCommands(
  ctx: Context,
  channels: WebDriverChannels,
  deviceRunId: number,
  commands: readonly { readonly id: number }[],
): Promise<void> {
  if (commands.length === 0) return;
  const ids = commands.map((command) => command.id);
  channels.giveBack(deviceRunId, ids.filter(isMemoryCommand));
  await ctx.store.webDriver.untake(
    deviceRunId,
    ids.filter((id) => !isMemoryCommand(id)),
  );
  ctx.notifier.notify(commandTopic(deviceRunId));
}

const strip = (commands: readonly PolledCommand[]): PolledCommand[] =>
  commands.map(({ id, method, path, body }) => ({ id, method, path, body }));

/**
 * The device's answer to a command; a repeated answer changes nothing. With `waitMs`, the agent's
 * next poll too, answered as takeCommands would.
 */
export async function answerCommand(
  ctx: Context,
  channels: WebDriverChannels,
  agent: Agent,
  deviceRunId: number,
  answer: { commandId: number; status: number; body: string; waitMs?: number },
  signal: AbortSignal,
): Promise<WebDriverAnswerResponse> {
  const { ok } = await record(ctx, channels, agent, deviceRunId, answer);
  if (answer.waitMs === undefined) return { ok };
  return { ok, ...(await takeCommands(ctx, channels, agent, deviceRunId, answer.waitMs, signal)) };
}

async function record(
  ctx: Context,
  channels: WebDriverChannels,
  agent: Agent,
  deviceRunId: number,
  answer: { commandId: number; status: number; body: string },
): Promise<{ ok: boolean }> {
  const local = channels.answer(deviceRunId, agent.id, answer.commandId, { status: answer.status, body: answer.body });
  if (local !== undefined) {
    // The client has its answer already. The log is written behind it, in order, while the agent
    // goes on; a failed write fails a later answer (which the agent retries), and the session's
    // last command waits for its own, so that the log is whole when the device run ends.
    const write = logRelayed(channels, local, answer, ctx.clock());
    await (isLastCommand(local) ? write.this : write.room());
    return { ok: true };
  }
  await requireHeldRun(ctx, agent, deviceRunId);
  // A command relayed in memory by another server (behind a load balancer without affinity the
  // agent's requests reach any server): that server's client waits for this answer.
  const first = isMemoryCommand(answer.commandId)
    ? await ctx.store.webDriver.handOff({
        commandId: answer.commandId,
        deviceRunId,
        status: answer.status,
        answer: answer.body,
        now: ctx.clock(),
      })
    : await ctx.store.webDriver.answer(answer.commandId, deviceRunId, answer.status, answer.body, ctx.clock());
  if (first) ctx.notifier.notify(answerTopic(answer.commandId));
  return { ok: first };
}

async function requireHeldRun(ctx: Context, agent: Agent, deviceRunId: number): Promise<DeviceRun> {
  const deviceRun = await ctx.store.deviceRuns.findById(deviceRunId);
  if (deviceRun === undefined || deviceRun.agentId !== agent.id)
    throw new ConflictError(`Device run ${deviceRunId} is not held by this agent`);
  return deviceRun;
}
