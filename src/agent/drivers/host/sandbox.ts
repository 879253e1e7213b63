/**
 * The one seam through which customer code (a test package's run-tests.sh) runs on a device host,
 * whatever the driver. `bubblewrap` (bubblewrap.ts) gives it its own uid, mount, PID, IPC, UTS and
 * cgroup namespaces, a read-only system, its own folder as the only writable place and, on the
 * public flavour, no network; `none` runs it as the agent's user with no isolation, for
 * development hosts that cannot sandbox, and only when the operator chose it (sandbox-choice.ts).
 * Limits (memory, processes, CPU time, disk) are watched by sandbox-limits.ts on both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { SandboxNetwork } from '../../../domain/flavours.ts';
import { type ProcessStat, sessionProcesses, signalSession } from './process-tree.ts';

export const SANDBOX_KINDS = ['bubblewrap', 'none'] as const;
export type SandboxKind = (typeof SANDBOX_KINDS)[number];

// Which networks a sandbox may have is a rule of the flavours (domain/flavours.ts).
export { SANDBOX_NETWORKS, type SandboxNetwork } from '../../../domain/flavours.ts';

export interface SandboxLimits {
  /** Summed resident memory of every process, MiB. */
  readonly memoryMb: number;
  /** Processes alive at once. */
  readonly processes: number;
  /** CPU time of every process together, seconds. */
  readonly cpuSeconds: number;
  /** Size of the writable folder, MiB (and the largest single file). */
  readonly diskMb: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { memoryMb: 4096, processes: 512, cpuSeconds: 3600, diskMb: 4096 };

export interface SandboxSpec {
  /** Folders the script may write (its own run folder, a virtual device's storage); same paths inside. */
  readonly writable: readonly string[];
  /** Files and folders it may read besides the system (the app, an SDK). Missing ones are skipped. */
  readonly readOnly: readonly string[];
  readonly cwd: string;
  /** The whole environment of the script: nothing of the agent's is added. */
  readonly env: Readonly<Record<string, string>>;
  readonly command: readonly string[];
  /**
   * The agent's own helper the command runs under (its parent, ending with it: the adb driver's
   * relay): in the sandbox like the command, but outside the per-process rlimits, which are the
   * customer's (a Node helper needs more address space than a small memory limit allows).
   */
  readonly launcher?: readonly string[];
}

/** A sandboxed command while it runs. */
export interface SandboxedProcess {
  readonly child: ChildProcess;
  /** The pid the agent spawned (a session leader): killing its session ends the sandbox. */
  readonly pid: number | undefined;
  /** The processes of the customer's code now (for sampling and limits). */
  members(): ProcessStat[];
  /** Asks every process inside to end (SIGTERM). */
  terminate(): void;
  /** Ends everything inside at once. */
  kill(): void;
}

export interface Sandbox {
  readonly kind: SandboxKind;
  /** One line for the agent's log: what isolation the code gets. */
  readonly description: string;
  readonly network: SandboxNetwork;
  readonly limits: SandboxLimits;
  spawn(spec: SandboxSpec): SandboxedProcess;
}

/** Which limit a run broke: the customer's fault, never the device's. */
export type SandboxLimit = keyof SandboxLimits;

export interface LimitBreach {
  readonly limit: SandboxLimit;
  /** For the user, e.g. "the tests used more than 4096 MiB of memory (the sandbox's limit); they were stopped". */
  readonly message: string;
}

/**
 * No isolation: the script runs as the agent's user, in a session of its own (killed by session).
 * It sees the host as the agent does; only for hosts that cannot sandbox, chosen knowingly.
 */
export function noSandbox(limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Sandbox {
  return {
    kind: 'none',
    description:
      'no sandbox: customer code runs as the agent user and can read everything the agent can (--sandbox none)',
    network: 'host',
    limits,
    spawn(spec) {
      const command = [...(spec.launcher ?? []), ...spec.command];
      const child = spawn(command[0]!, command.slice(1), {
        cwd: spec.cwd,
        env: { ...spec.env },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const sid = child.pid;
      return {
        child,
        pid: sid,
        members: () => (sid === undefined ? [] : sessionProcesses(sid)),
        terminate: () => sid !== undefined && signalSession(sid, 'SIGTERM'),
        kill: () => sid !== undefined && signalSession(sid, 'SIGKILL'),
      };
    },
  };
}
