/** The sandbox driver tests run customer code in: bubblewrap, as on a device host (CI installs it). */
import path from 'node:path';
import { createBubblewrapSandbox, findBwrap, probeBubblewrap } from '../../src/agent/drivers/host/bubblewrap.ts';
import { DEFAULT_SANDBOX_LIMITS, type Sandbox, type SandboxLimits, type SandboxNetwork } from '../../src/agent/drivers/host/sandbox.ts';

export function testSandbox(dataDir: string, options: { network?: SandboxNetwork; limits?: Partial<SandboxLimits>; uidBase?: number } = {}): Sandbox {
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
