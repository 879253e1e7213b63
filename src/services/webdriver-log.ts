/**
 * The command log of a session relayed in memory (services/webdriver-channels.ts), written behind
 * the answers: the commands answered within LOG_EVERY_MS go in one statement. One insert per
 * command was the hub's largest piece of database work per relayed command, on the same cores as
 * the commands that came next (issue 19, docs/benchmarks.md#webdriver-relay). The log stays whole
 * and in order: writes go one at a time, oldest first; the session's last command is written at
 * once and its answer waits for it; a write that failed fails a later answer.
 */
import type { LoggedCommand } from '../domain/webdriver.ts';

export type WriteLog = (rows: readonly LoggedCommand[]) => Promise<void>;

/**
 * How long an answered command may wait to be logged with the ones after it. A session's log is read
 * after the session (or seconds into it, in the dashboard): a few commands' worth of delay is unseen.
 */
export const LOG_EVERY_MS = 25;
/** Rows waiting or being written beyond which an answer waits for the write ahead (a slow database slows the agent down). */
const LOG_BACKLOG = 256;

export interface LogEntry {
  /** Once there is room in the backlog; rejects with a failed earlier write, reported once. */
  room(): Promise<void>;
  /** Settles with the write of this command's row. */
  readonly this: Promise<void>;
}

export type CommandLog = ReturnType<typeof commandLog>;

export function commandLog(write: WriteLog, everyMs = LOG_EVERY_MS, after: Promise<void> = Promise.resolve()) {
  /** Answered, not in a write yet, and the promise their write will settle. */
  let rows: LoggedCommand[] = [];
  let batch: { done: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | null = null;
  let inFlight = 0;
  /** The last write (never rejects): the next waits for it. */
  let logged = after;
  let failed: unknown;
  let timer: NodeJS.Timeout | null = null;
  let now: NodeJS.Immediate | null = null;

  function flush(): Promise<void> {
    if (timer !== null) clearTimeout(timer);
    if (now !== null) clearImmediate(now);
    timer = now = null;
    if (batch === null) return logged;
    const { resolve, reject } = batch;
    const taken = rows;
    rows = [];
    batch = null;
    inFlight += taken.length;
    logged = logged.then(async () => {
      try {
        await write(taken);
        resolve();
      } catch (error) {
        failed ??= error;
        reject(error);
      } finally {
        inFlight -= taken.length;
      }
    });
    return logged;
  }

  return {
    /** Logs an answered command; `last` (the session's end) writes it, and those before it, now. */
    add(row: LoggedCommand, last: boolean): LogEntry {
      rows.push(row);
      if (batch === null) {
        let resolve!: () => void;
        let reject!: (error: unknown) => void;
        const done = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
        // Reported through `failed` to a later answer; `this` is awaited only by some.
        done.catch(() => undefined);
        batch = { done, resolve, reject };
      }
      const { done } = batch;
      // After the answer in hand has left, as the client's next command should not wait for the write.
      if (last) now ??= setImmediate(flush);
      else timer ??= setTimeout(flush, everyMs);
      const ahead = logged;
      return {
        this: done,
        room: async () => {
          if (rows.length + inFlight > LOG_BACKLOG) await ahead;
          const error = failed;
          failed = undefined;
          if (error !== undefined) throw error;
        },
      };
    },

    /** Writes what waits now (the session is over, the server closes); settles once written. */
    flush,

    /** Drops what waits, unwritten: its store is gone (webdriver-channels.ts, a context handed over). */
    discard(): void {
      if (timer !== null) clearTimeout(timer);
      if (now !== null) clearImmediate(now);
      timer = now = null;
      batch?.reject(new Error('the command log was dropped with its store'));
      batch = null;
      rows = [];
    },
  };
}
