/**
 * Which sandbox an agent runs customer code in, decided once at start from its settings and what
 * the host can do. The public flavour runs strangers' code: there the agent refuses to start
 * without a working bubblewrap (one line saying why), refuses `--sandbox none`, and refuses a
 * network that reaches the host. Private and enterprise clouds run their own people's code: there
 * a host that cannot sandbox still works, with a loud warning, unless bubblewrap was required.
 */
import path from 'node:path';
import type { AgentConfig } from '../../../config-agent.ts';
import { ConfigError } from '../../../config-values.ts';
import type { Flavour } from '../../../domain/flavours.ts';
import { createBubblewrapSandbox, findBwrap, probeBubblewrap } from './bubblewrap.ts';
import { type Sandbox, type SandboxLimits, noSandbox } from './sandbox.ts';

type SandboxSettings = { readonly flavour: Flavour } & Pick<
  AgentConfig,
  | 'sandbox'
  | 'sandboxNetwork'
  | 'sandboxUidBase'
  | 'sandboxMemoryMb'
  | 'sandboxProcesses'
  | 'sandboxCpuSeconds'
  | 'sandboxDiskMb'
  | 'sandboxReadOnly'
>;

export interface SandboxHost {
  /** The bwrap executable, if any. */
  readonly bwrap: string | undefined;
  /** Why bubblewrap cannot sandbox here, or null when it can. */
  probe(bwrap: string | undefined, stateDir: string): string | null;
}

let bwrap: { readonly path: string | undefined } | undefined;

/** This host: bwrap is looked up on PATH when first asked for, not when a role merely loads this module. */
export const REAL_HOST: SandboxHost = {
  get bwrap() {
    bwrap ??= { path: findBwrap() };
    return bwrap.path;
  },
  probe: probeBubblewrap,
};

export function sandboxLimits(settings: SandboxSettings): SandboxLimits {
  return {
    memoryMb: settings.sandboxMemoryMb,
    processes: settings.sandboxProcesses,
    cpuSeconds: settings.sandboxCpuSeconds,
    diskMb: settings.sandboxDiskMb,
  };
}

/** The sandbox, or a ConfigError (one line) why this agent must not start; warnings go to `warn`. */
export function chooseSandbox(
  settings: SandboxSettings,
  dataDir: string,
  warn: (line: string) => void,
  host: SandboxHost = REAL_HOST,
): Sandbox {
  const publicCloud = settings.flavour === 'public';
  const network = settings.sandboxNetwork ?? (publicCloud ? 'none' : 'host');
  const limits = sandboxLimits(settings);
  if (publicCloud && network === 'host') {
    throw new ConfigError(
      "Refusing to start: --sandbox-network host would give customer code on the public flavour a path to this host's own services",
    );
  }
  if (settings.sandbox === 'none') {
    if (publicCloud)
      throw new ConfigError(
        "Refusing to start: the public flavour runs strangers' code, and --sandbox none would run it unisolated as the agent's user",
      );
    warn(
      `WARNING: --sandbox none: customer code runs as the agent's user, unisolated; it can read the agent's token and data (development only)`,
    );
    return noSandbox(limits);
  }
  const stateDir = path.join(dataDir, 'sandbox');
  const problem = host.probe(host.bwrap, stateDir);
  if (problem === null) {
    return createBubblewrapSandbox({
      bwrap: host.bwrap!,
      network,
      limits,
      uidBase: settings.sandboxUidBase,
      extraReadOnly: settings.sandboxReadOnly,
      stateDir,
    });
  }
  if (publicCloud) throw new ConfigError(`Refusing to start on the public flavour without a sandbox: ${problem}`);
  if (settings.sandbox === 'bubblewrap')
    throw new ConfigError(`Refusing to start: --sandbox bubblewrap, but ${problem}`);
  warn(
    `WARNING: NO SANDBOX: ${problem}. Customer code will run as the agent's user, unisolated, and can read the agent's token and data. Install bubblewrap, or set --sandbox none to accept this knowingly.`,
  );
  return noSandbox(limits);
}
