/**
 * The WebDriver relay's fast path (docs/api.md#appium-client-side): when the agent holding a
 * session's device long-polls THIS server, a command the client sent here is handed to that poll
 * in memory and its answer comes back in memory, instead of crossing the database and a
 * notification each way (36 ms per command on SQLite, 96 ms on PostgreSQL before, see
 * docs/benchmarks.md). The command is logged once answered. Everything else (a command that
 * reaches another server, an agent that polls elsewhere or stopped polling) takes the database
 * path of services/webdriver.ts, which works across servers. One per server process, built with
 * its app; nothing here survives a restart, and nothing needs to: an agent that loses its server
 * polls another, where the database path serves it.
 */
import type { LoggedCommand } from '../domain/webdriver.ts';
import type { Notifier } from '../store/notifier.ts';
import type { WebDriverAnswer } from './webdriver.ts';
import { type CommandLog, type LogEntry, type WriteLog, commandLog } from './webdriver-log.ts';

/**
 * Ids of commands relayed in memory are drawn at random from the upper half of the safe integers,
 * where database ids never get to: an answer names its command by id, and must not be taken for
 * another one's, also when it reaches another server than the command's (which then hands it over
 * through the database, services/webdriver-agent.ts).
 */
const MEMORY_IDS_FROM = 2 ** 52;
export const isMemoryCommand = (commandId: number) => commandId >= MEMORY_IDS_FROM;

/** Commands of a device run were written to the database (by any server). */
export const commandTopic = (deviceRunId: number) => `wd-commands:${deviceRunId}`;

/** A command waiting for the device, as the agent takes it. */
export interface LocalCommand {
  readonly id: number;
  readonly deviceRunId: number;
  readonly method: string;
  readonly path: string;
  readonly body: string;
  readonly createTime: number;
}

/** How long after its last poll here an agent is still taken as polling here (it is between two polls). */
const LIVE_MS = 2000;
/** How long a channel no agent polls is kept. */
const FORGET_MS = 15 * 60_000;

interface Channel {
  readonly deviceRunId: number;
  readonly agentId: number;
  /** Sent, not yet taken. */
  readonly queue: LocalCommand[];
  /** Taken (or queued), waiting for their answer. */
  readonly waiting: Map<number, { command: LocalCommand; resolve: (answer: WebDriverAnswer) => void }>;
  /** Wakes the agent's poll waiting here. */
  wake: (() => void) | null;
  lastSeen: number;
  /** The command log of its session, written behind the answers. */
  readonly log: CommandLog;
  /** Commands may wait in the database (a notification came since the agent's poll last looked there). */
  dirty: boolean;
  /** When the agent's poll last looked at the database (for commands, and whether the session is over). */
  checked: number;
  readonly stop: AbortController;
}

export interface SentCommand {
  readonly command: LocalCommand;
  /** The agent's poll was waiting here when the command came: it takes it at once. */
  readonly polled: boolean;
  readonly answer: Promise<WebDriverAnswer>;
  /** The agent has not taken it yet. */
  queued(): boolean;
  /** Takes the command back if the agent has not taken it yet: true when it was still queued. */
  withdraw(): boolean;
  /** Gives up waiting for the answer (the client went away, the device run ended). */
  forget(): void;
  /** How long the agent has sent this server nothing (ms): it may have moved to another server. */
  away(): number;
}

export type WebDriverChannels = ReturnType<typeof webDriverChannels>;

/**
 * `source.notifier` is read at each use, not once: the app's context may hand over to another
 * store and notifier (the tests' app pool, test/support/app-pool.ts, leases one app to test after
 * test). The channels of the one before are dropped then, their unwritten log rows too: they name
 * device runs of another store, and their watchers listen where nothing is sent any more (each
 * command took the 5 s recheck).
 */
export function webDriverChannels(
  source: { readonly notifier: Notifier },
  options: { writeLog: WriteLog; logEveryMs?: number },
) {
  let notifier = source.notifier;
  const channels = new Map<number, Channel>();
  /** Sessions whose commands reached this server, and their device runs (a session never changes device run). */
  const sessions = new Map<string, number>();
  /** When each agent last sent this server a request (any of the protocol's). */
  const seen = new Map<number, number>();
  const commandId = (channel: Channel) => {
    let id;
    do id = MEMORY_IDS_FROM + Math.floor(Math.random() * MEMORY_IDS_FROM);
    while (channel.waiting.has(id));
    return id;
  };

  /**
   * Notes every notification of the device run's database commands, so that the agent's poll only
   * looks at the database when there is something there, or to see whether the session is over.
   */
  async function watch(channel: Channel): Promise<void> {
    while (!channel.stop.signal.aborted) {
      if (await notifier.wait(commandTopic(channel.deviceRunId), 60_000, channel.stop.signal)) {
        channel.dirty = true;
        channel.wake?.();
      }
    }
  }

  const follow = () => {
    if (source.notifier === notifier) return;
    for (const channel of channels.values()) {
      channel.stop.abort();
      channel.log.discard();
    }
    channels.clear();
    sessions.clear();
    seen.clear();
    notifier = source.notifier;
  };

  return {
    /** The agent holding the device run polls here (checked by the caller): its channel. */
    attach(deviceRunId: number, agentId: number): Channel {
      follow();
      // Channels of agents that died without a word, and their sessions, go after a while.
      for (const [id, stale] of channels)
        if (stale.wake === null && Date.now() - stale.lastSeen > FORGET_MS) this.detach(id);
      let channel = channels.get(deviceRunId);
      if (channel === undefined || channel.agentId !== agentId) {
        // Another agent's channel (the device run changed hands): its log's rows come first.
        const before = channel?.log.flush();
        channel = {
          deviceRunId,
          agentId,
          queue: [],
          waiting: new Map(),
          wake: null,
          lastSeen: Date.now(),
          log: commandLog(options.writeLog, options.logEveryMs, before),
          dirty: true,
          checked: 0,
          stop: new AbortController(),
        };
        channels.set(deviceRunId, channel);
        void watch(channel);
      }
      channel.lastSeen = Date.now();
      return channel;
    },

    /** The agent's channel if it already polled here for this device run. */
    of(deviceRunId: number, agentId: number): Channel | undefined {
      follow();
      const channel = channels.get(deviceRunId);
      return channel?.agentId === agentId ? channel : undefined;
    },

    /** The session's device run, once a command of it was checked against the database here. */
    deviceRunOf: (sessionId: string) => (follow(), sessions.get(sessionId)),
    remember: (sessionId: string, deviceRunId: number) => (follow(), void sessions.set(sessionId, deviceRunId)),

    /** The channel of an agent polling here now, or a moment ago (it is sending an answer). */
    live(deviceRunId: number): Channel | undefined {
      follow();
      const channel = channels.get(deviceRunId);
      if (channel === undefined) return undefined;
      if (channel.wake !== null || Date.now() - channel.lastSeen < LIVE_MS) return channel;
      return undefined;
    },

    /** The agent sent this server a request. */
    agentSeen: (agentId: number) => (follow(), void seen.set(agentId, Date.now())),

    send(channel: Channel, command: Omit<LocalCommand, 'id'>): SentCommand {
      const sent: LocalCommand = { ...command, id: commandId(channel) };
      let resolve!: (answer: WebDriverAnswer) => void;
      const answer = new Promise<WebDriverAnswer>((done) => (resolve = done));
      channel.waiting.set(sent.id, { command: sent, resolve });
      channel.queue.push(sent);
      const polled = channel.wake !== null;
      channel.wake?.();
      return {
        command: sent,
        polled,
        answer,
        queued: () => channel.queue.includes(sent),
        withdraw() {
          const index = channel.queue.indexOf(sent);
          if (index < 0) return false;
          channel.queue.splice(index, 1);
          channel.waiting.delete(sent.id);
          return true;
        },
        forget: () => void channel.waiting.delete(sent.id),
        away: () => Date.now() - Math.max(channel.lastSeen, seen.get(channel.agentId) ?? 0),
      };
    },

    /** What the agent's poll takes: the queued commands, oldest first. */
    take(channel: Channel): LocalCommand[] {
      channel.lastSeen = Date.now();
      return channel.queue.splice(0);
    },

    /**
     * Commands a poll took but could not hand over (the agent hung up, the socket closed): queued
     * again, ahead of the others, for the agent's next poll. Those answered or forgotten since stay out.
     */
    giveBack(deviceRunId: number, commandIds: readonly number[]): void {
      const channel = channels.get(deviceRunId);
      if (channel === undefined) return;
      const back = commandIds.flatMap((id) => {
        const command = channel.waiting.get(id)?.command;
        return command === undefined || channel.queue.includes(command) ? [] : [command];
      });
      if (back.length === 0) return;
      channel.queue.unshift(...back);
      channel.wake?.();
    },

    /** The agent's answer to a command sent in memory: its command, or undefined when it is not one. */
    answer(deviceRunId: number, agentId: number, commandId: number, answer: WebDriverAnswer): LocalCommand | undefined {
      const channel = channels.get(deviceRunId);
      const entry = channel?.agentId === agentId ? channel.waiting.get(commandId) : undefined;
      if (channel === undefined || entry === undefined) return undefined;
      channel.waiting.delete(commandId);
      channel.lastSeen = Date.now();
      entry.resolve(answer);
      return entry.command;
    },

    /**
     * Logs a command answered in memory, behind the device run's earlier ones, in order
     * (services/webdriver-log.ts); `last`, the session's end, is written at once.
     */
    logAfter(row: LoggedCommand, last: boolean): LogEntry {
      const log = channels.get(row.deviceRunId)?.log;
      if (log !== undefined) return log.add(row, last);
      // The channel is gone (the session ended here meanwhile): this one alone.
      const written = options.writeLog([row]);
      written.catch(() => undefined);
      return { room: async () => undefined, this: written };
    },

    /**
     * The server closes: the watchers stop (a wait in them would hold the process up to a minute),
     * and what the command logs hold is written.
     */
    async close(): Promise<void> {
      const logs = [...channels.values()].map((channel) => channel.log);
      for (const id of [...channels.keys()]) this.detach(id);
      await Promise.all(logs.map((log) => log.flush()));
    },

    /** The session is over: what is still waiting stays unanswered here (its waiter sees the device run end). */
    detach(deviceRunId: number): void {
      const channel = channels.get(deviceRunId);
      channel?.stop.abort();
      void channel?.log.flush();
      channels.delete(deviceRunId);
      for (const [sessionId, of] of sessions) if (of === deviceRunId) sessions.delete(sessionId);
    },
  };
}
