/**
 * Wakes waiting agents. A claim long-polls until work appears for one of its devices or an abort
 * concerns it; whoever creates work or aborts calls `notify` with the agent's topic. In one
 * process an EventEmitter is enough; several servers share notifications through PostgreSQL
 * LISTEN/NOTIFY behind the same interface. It follows the database (one SQLite server, or the
 * servers of one PostgreSQL), hence the store: the services that notify and wait sit above it.
 */
import { EventEmitter } from 'node:events';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';

export interface Notifier {
  notify(topic: string): void;
  /** Resolves true when notified, false after `timeoutMs` or when `signal` aborts. */
  wait(topic: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /**
   * `wait`, with `cancel` to stop waiting (`woken` resolves false): without an AbortController of
   * the caller's and an AbortSignal.any of the two, an event dispatch per wait (issue 19). Called
   * before the caller looks at the database, so that a wake-up between the look and the wait is not
   * lost (it would cost the wait's whole timeout).
   */
  listen(topic: string, timeoutMs: number, signal?: AbortSignal): Listening;
  close(): Promise<void>;
}

export interface Listening {
  readonly woken: Promise<boolean>;
  cancel(): void;
}

export const agentTopic = (agentId: number) => `agent:${agentId}`;

export function memoryNotifier(): Notifier {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    notify(topic) {
      emitter.emit(topic);
    },
    ...waitOn(emitter),
    async close() {
      emitter.removeAllListeners();
    },
  };
}

function waitOn(emitter: EventEmitter): Pick<Notifier, 'wait' | 'listen'> {
  const listen = (topic: string, timeoutMs: number, signal?: AbortSignal): Listening => {
    let cancel!: () => void;
    const woken = new Promise<boolean>((resolve) => {
      const done = (notified: boolean) => {
        clearTimeout(timer);
        emitter.off(topic, onNotify);
        signal?.removeEventListener('abort', onAbort);
        resolve(notified);
      };
      const onNotify = () => done(true);
      const onAbort = () => done(false);
      cancel = onAbort;
      const timer = setTimeout(() => done(false), timeoutMs);
      emitter.on(topic, onNotify);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) done(false);
    });
    return { woken, cancel };
  };
  return { listen, wait: (topic, timeoutMs, signal) => listen(topic, timeoutMs, signal).woken };
}

export interface PostgresNotifierOptions {
  /** Connection string of the database the servers share. */
  readonly url: string;
  /** The schema the servers use: servers of other schemas in the same database are not woken. */
  readonly schema: string;
  readonly db: Kysely<any>;
  readonly log: (message: string) => void;
}

/**
 * Notifications between the servers of one cloud through PostgreSQL LISTEN/NOTIFY: `notify` sends
 * a NOTIFY (after the caller's transaction committed), and every server's listening connection
 * wakes its own waiters, the sender's included. When the listening connection breaks, it is
 * reopened, and every waiter is woken once, since notifications may have been missed meanwhile.
 */
export async function postgresNotifier(options: PostgresNotifierOptions): Promise<Notifier> {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const channel = `devicecloud_${options.schema}`.slice(0, 63);
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = 250;

  const wakeEveryone = () => {
    for (const topic of emitter.eventNames()) emitter.emit(topic);
  };

  async function listen(): Promise<void> {
    const next = new pg.Client({ connectionString: options.url });
    next.on('notification', (message) => {
      if (message.payload) emitter.emit(message.payload);
    });
    next.on('error', (error) => {
      options.log(`notifications: the listening connection failed (${error.message}); reconnecting`);
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      void reconnect();
    });
    await next.connect();
    await next.query(`LISTEN "${channel}"`);
    client = next;
    retryMs = 250;
  }

  async function reconnect(): Promise<void> {
    while (!closed && client === undefined) {
      await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
      retryMs = Math.min(retryMs * 2, 10_000);
      try {
        await listen();
        wakeEveryone();
      } catch (error) {
        options.log(`notifications: cannot listen yet (${(error as Error).message})`);
      }
    }
  }

  await listen();
  return {
    notify(topic) {
      sql`SELECT pg_notify(${channel}, ${topic})`.execute(options.db).catch((error: Error) => {
        // The waiter still wakes at its timeout: a lost notification delays, never loses, work.
        options.log(`notifications: could not notify ${topic} (${error.message})`);
      });
    },
    ...waitOn(emitter),
    async close() {
      closed = true;
      emitter.removeAllListeners();
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
