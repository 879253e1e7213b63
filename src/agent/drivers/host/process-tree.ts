/**
 * CPU and memory of everything a test package starts, read from /proc (Linux). The tests run in a
 * session of their own (spawned detached, i.e. setsid): a session, unlike a process group, also
 * holds what tools like `timeout` move into groups of their own, so sampling and killing by
 * session id leaves nothing out but deliberate daemons. CPU is the share of one core used since
 * the previous sample; memory is the summed resident set. Elsewhere (no /proc) there are no samples.
 */
import fs from 'node:fs';

/** Linux reports CPU times in clock ticks; USER_HZ is 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export interface GroupUsage {
  /** Clock ticks of user + system time of the group's live processes. */
  readonly ticks: number;
  readonly rssKb: number;
  readonly processes: number;
}

interface ProcessStat {
  readonly pid: number;
  readonly state: string;
  readonly session: number;
  readonly ticks: number;
  /** Clock ticks after boot when the process started: with the pid, names one process for good. */
  readonly startTime: number;
}

function readStat(pid: string): ProcessStat | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses: fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid: Number(pid), state: fields[0]!, session: Number(fields[3]), ticks: Number(fields[11]) + Number(fields[12]), startTime: Number(fields[19]) };
  } catch {
    return undefined; // it ended while we looked
  }
}

/** Live (non-zombie) processes of a session. */
export function sessionProcesses(sid: number): ProcessStat[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((entry) => /^\d+$/.test(entry))
    .map(readStat)
    .filter((stat): stat is ProcessStat => stat !== undefined && stat.session === sid && stat.state !== 'Z');
}

/** The start time of a live process, to tell it from a later one that reuses its pid. */
export function startTimeOf(pid: number): number | undefined {
  const stat = readStat(String(pid));
  return stat === undefined || stat.state === 'Z' ? undefined : stat.startTime;
}

export function groupUsage(sid: number): GroupUsage {
  let ticks = 0;
  let rssKb = 0;
  const processes = sessionProcesses(sid);
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

/**
 * Samples a session once a second, from its start; cpu is 0..1 of one core, clamped. The session
 * has just been created, so it starts from zero ticks: reading them would cost a scan of /proc.
 */
export function sampleGroup(sid: number, onSample: (sample: { cpuUsage: number; memUsage: number }) => void, intervalMs = 1000): () => void {
  let previous = { at: Date.now(), ticks: 0 };
  const timer = setInterval(() => {
    const usage = groupUsage(sid);
    if (usage.processes === 0) return;
    const now = Date.now();
    const seconds = (now - previous.at) / 1000;
    const cpu = seconds > 0 ? Math.max(0, usage.ticks - previous.ticks) / TICKS_PER_SECOND / seconds : 0;
    previous = { at: now, ticks: usage.ticks };
    onSample({ cpuUsage: Math.min(1, Math.round(cpu * 1000) / 1000), memUsage: usage.rssKb });
  }, intervalMs);
  return () => clearInterval(timer);
}
