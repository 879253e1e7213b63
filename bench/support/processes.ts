/** Child processes of the benchmarks: TypeScript entry points started with tsx, and their memory. */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createInterface } from 'node:readline';

export interface Child {
  readonly process: ChildProcess;
  /** What the child announced on its `READY` line, parsed as JSON. */
  readonly hello: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Children announce themselves on stdout with this prefix and a JSON object (other lines are logs). */
export const READY = 'devicecloud-bench-ready ';

/** Starts `node --import tsx script args…` and waits for its READY line. */
export async function startChild(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  nodeArgs: readonly string[] = [],
): Promise<Child> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const lines = createInterface({ input: child.stdout! });
  const hello = await new Promise<Record<string, unknown>>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith(READY)) resolve(JSON.parse(line.slice(READY.length)) as Record<string, unknown>);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready: ${stderr}`)));
  });
  return {
    process: child,
    hello,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resident set size of a process, in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match === null ? Number.NaN : Number(match[1]) * 1024;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak. */
export function watchRss(pid: number, everyMs = 100): { peak(): number; stop(): number } {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // the process is gone
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    peak: () => peak,
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * CPU time a process has used (user + system, all its threads), in milliseconds (Linux /proc;
 * 10 ms ticks). Per request, it says what a server costs even when the machine is busy with other
 * work, which wall-clock throughput does not.
 */
export function cpuMsOf(pid: number, options: { withChildren?: boolean } = {}): number {
  const fields = statOf(pid);
  // utime, stime; then cutime, cstime: the children it has waited for (test processes, ffmpeg).
  const ticks = Number(fields[11]) + Number(fields[12]);
  const children = options.withChildren === true ? Number(fields[13]) + Number(fields[14]) : 0;
  return ((ticks + children) * 1000) / TICKS_PER_SECOND;
}

/** The fields of /proc/PID/stat from the third (the state) on: the command name may hold spaces. */
function statOf(pid: number): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The processes whose parent is `pid` (Linux /proc). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (Number(statOf(Number(name))[1]) === pid) children.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

const TICKS_PER_SECOND = 100;
