/**
 * The agent of `devicecloud local`, in a process of its own (`devicecloud agent`, over loopback),
 * restarted if it dies, and ended with the cloud. It is the agent a device host runs, so `npm start`
 * exercises the real protocol, and a driver that crashes or blocks cannot take the API with it.
 * It also takes work off the server's event loop: each test start is a spawn(), which blocks its
 * caller while fork copies the page tables (about 3 ms a test in the benchmarks' profiles), and
 * unzipping, sampling /proc and uploading results are the agent's. Measured on 2 cores with 200
 * polling clients (`npm run chaos -- --quick --only load`): p50 latency 3.7–4.3 ms against 5.0–5.3
 * ms with the agent inside the server, 12% more requests a second; the orchestration overhead of 4
 * devices at once 75 ms against 85 ms (`npm run bench -- --only overhead`). The price is the
 * agent's own memory (about 170 MB resident: the whole `devicecloud` command, run from its TypeScript sources).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../config.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/devicecloud.js');
const READY = /registered \d+ device/;
const MAX_RESTART_DELAY_MS = 30_000;

export interface AgentProcessOptions {
  readonly serverUrl: string;
  readonly token: string;
  /** The cloud's data dir: the agent works under `<dataDir>/agent`, as `devicecloud agent` does. */
  readonly dataDir: string;
  /** The driver settings, as resolved for `local`. */
  readonly config: Pick<
    Config,
    | 'driver'
    | 'virtualDevices'
    | 'virtualPrefix'
    | 'iosBinary'
    | 'iosSigningDir'
    | 'iosSigner'
    | 'flavour'
    | 'sandbox'
    | 'sandboxNetwork'
    | 'sandboxUidBase'
    | 'sandboxMemoryMb'
    | 'sandboxProcesses'
    | 'sandboxCpuSeconds'
    | 'sandboxDiskMb'
    | 'sandboxReadOnly'
  > &
    Partial<Pick<Config, 'agentCacheMaxBytes' | 'zipMaxEntries' | 'zipMaxExpandedBytes' | 'zipMaxRatio'>>;
  /** Each line the agent prints. */
  readonly log: (line: string) => void;
  /** Trouble with the process itself (it died, it is restarted). */
  readonly warn: (line: string) => void;
}

export interface AgentProcess {
  /** Resolves once the agent registered its devices; rejects if the first start fails. */
  readonly ready: Promise<void>;
  /** Asks the agent to stop (its device runs end as retryable) and waits for it. */
  stop(): Promise<void>;
}

/** The flags that give the child the driver settings `local` resolved (from flags, environment or a file). */
export function driverFlags(config: AgentProcessOptions['config']): string[] {
  return [
    '--driver',
    config.driver,
    '--devices',
    String(config.virtualDevices),
    '--serial-prefix',
    config.virtualPrefix,
    '--ios-signer',
    config.iosSigner,
    ...(config.agentCacheMaxBytes === undefined ? [] : ['--cache-max-bytes', String(config.agentCacheMaxBytes)]),
    ...(config.zipMaxEntries === undefined ? [] : ['--zip-max-entries', String(config.zipMaxEntries)]),
    ...(config.zipMaxExpandedBytes === undefined
      ? []
      : ['--zip-max-expanded-bytes', String(config.zipMaxExpandedBytes)]),
    ...(config.zipMaxRatio === undefined ? [] : ['--zip-max-ratio', String(config.zipMaxRatio)]),
    ...(config.iosBinary === undefined ? [] : ['--ios-bin', config.iosBinary]),
    ...(config.iosSigningDir === undefined ? [] : ['--ios-signing', config.iosSigningDir]),
    // The cloud's flavour decides how strictly the agent sandboxes customer code.
    '--flavour',
    config.flavour,
    '--sandbox',
    config.sandbox,
    ...(config.sandboxNetwork === undefined ? [] : ['--sandbox-network', config.sandboxNetwork]),
    '--sandbox-uid-base',
    String(config.sandboxUidBase),
    '--sandbox-memory-mb',
    String(config.sandboxMemoryMb),
    '--sandbox-processes',
    String(config.sandboxProcesses),
    '--sandbox-cpu-seconds',
    String(config.sandboxCpuSeconds),
    '--sandbox-disk-mb',
    String(config.sandboxDiskMb),
    ...(config.sandboxReadOnly.length === 0 ? [] : ['--sandbox-read-only', config.sandboxReadOnly.join(',')]),
  ];
}

export function startAgentProcess(options: AgentProcessOptions): AgentProcess {
  const args = [
    BIN,
    'agent',
    '--server',
    options.serverUrl,
    '--data-dir',
    options.dataDir,
    ...driverFlags(options.config),
  ];
  let child: ChildProcess | undefined;
  let stopping = false;
  let everReady = false;
  let restartDelayMs = 1000;

  const launch = (): Promise<void> =>
    new Promise((resolve, reject) => {
      // The token travels in the environment (flags show in ps); the IPC channel tells the agent
      // when this process is gone, however it ended, so that no agent outlives its cloud.
      const started = spawn(process.execPath, args, {
        env: { ...process.env, DEVICECLOUD_AGENT_TOKEN: options.token },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      });
      child = started;
      let ready = false;
      let output = '';
      let pending = '';
      started.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          options.log(line);
          if (!ready && READY.test(line)) {
            ready = true;
            everReady = true;
            restartDelayMs = 1000;
            resolve();
          }
        }
      });
      started.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        process.stderr.write(chunk);
      });
      started.on('exit', (code, signal) => {
        if (!ready)
          reject(
            new Error(
              `the agent exited (${code ?? signal}) before registering its devices${output === '' ? '' : `:\n${output.slice(-2000)}`}`,
            ),
          );
        // A first start that fails fails `local`; once the agent has run, it is restarted, as a supervisor would.
        if (stopping || !everReady) return;
        options.warn(`the agent exited (${code ?? signal}); restarting it in ${restartDelayMs / 1000} s`);
        setTimeout(() => {
          if (!stopping) void launch().catch(() => undefined);
        }, restartDelayMs).unref();
        restartDelayMs = Math.min(restartDelayMs * 2, MAX_RESTART_DELAY_MS);
      });
    });

  return {
    ready: launch(),
    async stop() {
      stopping = true;
      const running = child;
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      // The agent gives its device runs 10 s to report themselves interrupted.
      const late = setTimeout(() => running.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(late);
    },
  };
}
