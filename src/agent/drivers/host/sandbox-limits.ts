/**
 * Watches a sandboxed run once a second: samples its CPU and memory (the virtual devices' "app"),
 * and stops it when it breaks a limit, saying which. This is the limit that holds on every host
 * (rlimits set inside the sandbox only stop single processes); cgroups v2 would account more
 * tightly and are not used yet (docs/security.md). CPU time counts ended processes too: their
 * time has reached the parent that waited for them, or is still in their zombie.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type ProcessStat, usageOf, TICKS_PER_SECOND } from './process-tree.ts';
import type { LimitBreach, SandboxLimits } from './sandbox.ts';

const MIB = 1024 * 1024;
/** The folder is measured every few samples: a walk costs more than a /proc scan. */
const DISK_EVERY = 2;

export interface WatchOptions {
  readonly limits: SandboxLimits;
  readonly members: () => ProcessStat[];
  readonly writable: readonly string[];
  readonly onSample?: (sample: { cpuUsage: number; memUsage: number }) => void;
  readonly onBreach: (breach: LimitBreach) => void;
  readonly intervalMs?: number;
}

export function breachMessage(limit: keyof SandboxLimits, limits: SandboxLimits): LimitBreach {
  const what = {
    memoryMb: `used more than ${limits.memoryMb} MiB of memory`,
    processes: `started more than ${limits.processes} processes at once`,
    cpuSeconds: `used more than ${limits.cpuSeconds} s of CPU time`,
    diskMb: `wrote more than ${limits.diskMb} MiB into their folder`,
  }[limit];
  return { limit, message: `the tests ${what} (the sandbox's ${limitName(limit)} limit) and were stopped` };
}

function limitName(limit: keyof SandboxLimits): string {
  return { memoryMb: 'memory', processes: 'process', cpuSeconds: 'CPU time', diskMb: 'disk' }[limit];
}

/** Starts watching; returns the function that stops it. Reports at most one breach. */
export function watchLimits(options: WatchOptions): () => void {
  const { limits } = options;
  let previous = { at: Date.now(), ticks: 0 };
  let round = 0;
  let breached = false;
  const breach = (limit: keyof SandboxLimits) => {
    if (breached) return;
    breached = true;
    options.onBreach(breachMessage(limit, limits));
  };
  const timer = setInterval(() => {
    round += 1;
    const members = options.members();
    const live = members.filter((member) => member.state !== 'Z');
    if (live.length === 0) return;
    const usage = usageOf(live);
    const totalTicks = members.reduce((sum, member) => sum + member.ticks + member.childTicks, 0);
    if (usage.rssKb > limits.memoryMb * 1024) breach('memoryMb');
    if (live.length >= limits.processes) breach('processes');
    if (totalTicks > limits.cpuSeconds * TICKS_PER_SECOND) breach('cpuSeconds');
    if (round % DISK_EVERY === 0 && folderBytes(options.writable, limits.diskMb * MIB) > limits.diskMb * MIB)
      breach('diskMb');
    if (options.onSample !== undefined) {
      const now = Date.now();
      const seconds = (now - previous.at) / 1000;
      const cpu = seconds > 0 ? Math.max(0, usage.ticks - previous.ticks) / TICKS_PER_SECOND / seconds : 0;
      previous = { at: now, ticks: usage.ticks };
      options.onSample({ cpuUsage: Math.min(1, Math.round(cpu * 1000) / 1000), memUsage: usage.rssKb });
    }
  }, options.intervalMs ?? 1000);
  return () => clearInterval(timer);
}

/** The least an entry costs: an inode and a directory slot are disk the tests take too. */
const ENTRY_BYTES = 4096;

/**
 * Bytes allocated under the folders (sparse files count what they take, every entry at least one
 * block), not following links, counted only until `limit` is passed: the walk runs on the agent's
 * event loop, and a swarm of empty files must cost its author the disk limit, not stall the agent.
 */
export function folderBytes(dirs: readonly string[], limit = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const walk = (current: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (total > limit) return;
      const full = path.join(current, entry.name);
      total += ENTRY_BYTES;
      if (entry.isDirectory()) walk(full);
      else {
        try {
          total += Math.max(lstatBytes(full) - ENTRY_BYTES, 0);
        } catch {
          // removed meanwhile
        }
      }
    }
  };
  for (const dir of dirs) walk(dir);
  return total;
}

const lstatBytes = (file: string) => fs.lstatSync(file).blocks * 512;
