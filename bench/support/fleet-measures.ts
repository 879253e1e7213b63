/**
 * What the fleet benchmark reads beside its own timings: the CPU of process trees from /proc, and
 * the statements PostgreSQL ran (pg_stat_statements, when the server preloads it).
 */
import fs from 'node:fs';
import os from 'node:os';
import type pg from 'pg';

const TICKS_PER_SECOND = 100;

interface Stat {
  readonly ppid: number;
  /** utime + stime of the process itself, and cutime + cstime of its reaped children, in ticks. */
  readonly own: number;
  readonly reaped: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    ppid: Number(fields[1]),
    own: Number(fields[11]) + Number(fields[12]),
    reaped: Number(fields[13]) + Number(fields[14]),
  };
}

/**
 * CPU seconds used so far by each process tree rooted at `roots` (the process, its live
 * descendants, and the children it reaped), read at once so that deltas between two readings
 * compare the same moment.
 */
export function treeCpuSeconds(roots: readonly number[]): number[] {
  const stats = new Map<number, Stat>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat !== undefined) stats.set(Number(entry), stat);
  }
  const children = new Map<number, number[]>();
  for (const [pid, stat] of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  const total = (pid: number): number => {
    const stat = stats.get(pid);
    if (stat === undefined) return 0;
    return stat.own + stat.reaped + (children.get(pid) ?? []).reduce((sum, child) => sum + total(child), 0);
  };
  return roots.map((root) => total(root) / TICKS_PER_SECOND);
}

/** Busy share of the machine's CPUs since boot, to print the load beside the figures. */
export function machineBusySeconds(): { busy: number; all: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = values[3]! + values[4]!;
  const all = values.reduce((sum, value) => sum + value, 0);
  return { busy: (all - idle) / TICKS_PER_SECOND, all: all / TICKS_PER_SECOND / os.availableParallelism() };
}

/** The PostgreSQL server's main process (the parent of this connection's backend). */
export async function postmasterPid(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return readStat(rows[0]!.pid)!.ppid;
}

export interface StatementFigures {
  readonly calls: number;
  /** The statements that took the most time, for the profile. */
  readonly top: Array<{ calls: number; ms: number; query: string }>;
}

/** Statements of `database` since the last reset, or undefined without pg_stat_statements. */
export async function statements(client: pg.Client, database: string): Promise<StatementFigures | undefined> {
  try {
    const { rows } = await client.query<{ calls: string; ms: number; query: string }>(
      `SELECT s.calls, s.total_exec_time AS ms, s.query FROM pg_stat_statements s
        JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat%'
        ORDER BY s.total_exec_time DESC`,
      [database],
    );
    return {
      calls: rows.reduce((sum, row) => sum + Number(row.calls), 0),
      top: rows.slice(0, 12).map((row) => ({ calls: Number(row.calls), ms: row.ms, query: row.query })),
    };
  } catch {
    return undefined;
  }
}

export async function resetStatements(client: pg.Client): Promise<void> {
  await client.query('SELECT pg_stat_statements_reset()').catch(() => undefined);
}

/** CPU seconds of each server, of PostgreSQL, of the actors, and the machine, at one moment. */
export function cpuReading(serverPids: number[], postgresPid: number, actorPids: number[]) {
  const trees = treeCpuSeconds([...serverPids, postgresPid, ...actorPids]);
  return {
    servers: trees.slice(0, serverPids.length),
    postgres: trees[serverPids.length]!,
    actors: trees.slice(serverPids.length + 1).reduce((sum, value) => sum + value, 0),
    self: process.cpuUsage(),
    machine: machineBusySeconds(),
    at: performance.now(),
  };
}
type CpuReading = ReturnType<typeof cpuReading>;

export function cpuBetween(before: CpuReading, after: CpuReading) {
  const seconds = (after.at - before.at) / 1000;
  const self = process.cpuUsage(before.self);
  return {
    seconds,
    servers: after.servers.map((value, index) => value - before.servers[index]!),
    postgres: after.postgres - before.postgres,
    actors: after.actors - before.actors + (self.user + self.system) / 1e6,
    /** Cores busy on the whole machine (everything, other users too). */
    machineCores: (after.machine.busy - before.machine.busy) / seconds,
  };
}

export function logProfile(log: (message: string) => void, phase: string, figures: StatementFigures | undefined) {
  if (figures === undefined) return;
  for (const { calls, ms, query } of figures.top)
    log(
      `[${phase} profile] ${ms.toFixed(0).padStart(7)} ms ${String(calls).padStart(7)}x ${query.replace(/\s+/g, ' ').slice(0, 160)}`,
    );
}
