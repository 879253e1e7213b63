/**
 * CPU and memory of everything a test package starts, read from /proc (Linux). The tests run in a
 * session of their own (spawned detached, i.e. setsid): a session, unlike a process group, also
 * holds what tools like `timeout` move into groups of their own, so sampling and killing by
 * session id leaves nothing out but deliberate daemons. CPU is the share of one core used since
 * the previous sample; memory is the summed resident set. Elsewhere (no /proc) there are no samples.
 */
import fs from 'node:fs';

/** Linux reports CPU times in clock ticks; USER_HZ is 100 on every architecture Node runs on. */
export const TICKS_PER_SECOND = 100;

export interface GroupUsage {
  /** Clock ticks of user + system time of the group's live processes. */
  readonly ticks: number;
  readonly rssKb: number;
  readonly processes: number;
}

export interface ProcessStat {
  readonly pid: number;
  readonly state: string;
  readonly parent: number;
  readonly session: number;
  readonly ticks: number;
  /** Clock ticks of its children that it waited for (they count once they have ended). */
  readonly childTicks: number;
  /** Clock ticks after boot when the process started: with the pid, names one process for good. */
  readonly startTime: number;
}

function readStat(pid: string): ProcessStat | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      pid: Number(pid),
      state: fields[0]!,
      parent: Number(fields[1]),
      session: Number(fields[3]),
      ticks: Number(fields[11]) + Number(fields[12]),
      childTicks: Number(fields[13]) + Number(fields[14]),
      startTime: Number(fields[19]),
    };
  } catch {
    return undefined; // it ended while we looked
  }
}

function allPids(): string[] {
  try {
    return fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
}

/** Live (non-zombie) processes of a session. */
export function sessionProcesses(sid: number): ProcessStat[] {
  return allPids()
    .map(readStat)
    .filter((stat): stat is ProcessStat => stat !== undefined && stat.session === sid && stat.state !== 'Z');
}

/** The PID namespace a process lives in (its inode), or undefined when it has gone. */
export function pidNamespaceOf(pid: number | string): number | undefined {
  try {
    return Number(/\[(\d+)\]/.exec(fs.readlinkSync(`/proc/${pid}/ns/pid`))?.[1]);
  } catch {
    return undefined;
  }
}

/**
 * The PID namespaces that children of the session's processes live in, other than ours: a
 * sandbox's. Killing the session's bwrap ends such a namespace a moment later (--die-with-parent),
 * so whoever must see it empty waits on these too.
 */
export function sandboxNamespacesOf(sid: number): Set<number> {
  const ours = pidNamespaceOf(process.pid);
  const members = new Set(sessionProcesses(sid).map((stat) => stat.pid));
  const found = new Set<number>();
  for (const stat of allPids().map(readStat)) {
    if (stat === undefined || !members.has(stat.parent)) continue;
    const namespace = pidNamespaceOf(stat.pid);
    if (namespace !== undefined && namespace !== ours) found.add(namespace);
  }
  return found;
}

/** Every process of a PID namespace, zombies included (their CPU time has not reached a parent yet). */
export function namespaceProcesses(namespace: number): ProcessStat[] {
  return allPids()
    .filter((pid) => pidNamespaceOf(pid) === namespace)
    .map(readStat)
    .filter((stat): stat is ProcessStat => stat !== undefined);
}

/** The start time of a live process, to tell it from a later one that reuses its pid. */
export function startTimeOf(pid: number): number | undefined {
  const stat = readStat(String(pid));
  return stat === undefined || stat.state === 'Z' ? undefined : stat.startTime;
}

export function groupUsage(sid: number): GroupUsage {
  return usageOf(sessionProcesses(sid));
}

/** Summed CPU (own, not children's) and memory of some processes. */
export function usageOf(processes: readonly ProcessStat[]): GroupUsage {
  let ticks = 0;
  let rssKb = 0;
  for (const process of processes) {
    ticks += process.ticks;
    try {
      rssKb += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${process.pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // ended meanwhile
    }
  }
  return { ticks, rssKb, processes: processes.length };
}

/** Signals every process of the session, and its process group for good measure. */
export function signalSession(sid: number, signal: NodeJS.Signals): void {
  for (const { pid } of sessionProcesses(sid)) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
  try {
    process.kill(-sid, signal);
  } catch {
    // gone
  }
}
