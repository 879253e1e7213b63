/** The sandbox driver tests run customer code in: bubblewrap, as on a device host (CI installs it). */
import fs from 'node:fs';
import path from 'node:path';
import { createBubblewrapSandbox, findBwrap, probeBubblewrap } from '../../src/agent/drivers/host/bubblewrap.ts';
import {
  DEFAULT_SANDBOX_LIMITS,
  type Sandbox,
  type SandboxLimits,
  type SandboxNetwork,
} from '../../src/agent/drivers/host/sandbox.ts';

export function testSandbox(
  dataDir: string,
  options: { network?: SandboxNetwork; limits?: Partial<SandboxLimits>; uidBase?: number } = {},
): Sandbox {
  const bwrap = findBwrap();
  const stateDir = path.join(dataDir, 'sandbox');
  const problem = probeBubblewrap(bwrap, stateDir);
  if (problem !== null) throw new Error(`the driver tests need bubblewrap: ${problem}`);
  return createBubblewrapSandbox({
    bwrap: bwrap!,
    network: options.network ?? 'none',
    limits: { ...DEFAULT_SANDBOX_LIMITS, ...options.limits },
    uidBase: options.uidBase ?? 1_900_000_000,
    stateDir,
  });
}

/**
 * Live processes (not zombies) whose command line (or environment) holds `marker`. Inside a
 * sandbox, $$ and $! are pids of its own PID namespace, which mean nothing outside: tests find the
 * processes by a marker.
 */
export function processesWith(marker: string, where: 'cmdline' | 'environ' = 'cmdline'): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (fs.readFileSync(`/proc/${entry}/${where}`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
