/**
 * A cloud of real processes for the chaos suite: `devicecloud serve` and `devicecloud agent`
 * (virtual devices), started from the real binary on a data folder of their own, on SQLite or on
 * a PostgreSQL URL, and killed with SIGKILL when a scenario says so. A restarted server keeps its
 * port, as a supervisor (systemd) would restart it, so the agent finds it again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type RunningProcess, runCli, startCli } from '../../test/support/cli.ts';
import { freePort } from './postgres.ts';

export interface CloudOptions {
  /** postgres://… or undefined for SQLite under the data folder. */
  readonly databaseUrl?: string;
  readonly devices: number;
  /** Extra flags for the server (rate limits, say). */
  readonly serverFlags?: readonly string[];
  /**
   * Flags for every agent; default `--sandbox none`: the faults and load scenarios' scripts write a
   * ledger on the host, which the sandbox forbids, so their agents run unsandboxed (the private
   * flavour, chosen knowingly). The tenants scenario gives `--flavour public` instead.
   */
  readonly agentFlags?: readonly string[];
}

export interface Cloud {
  readonly dir: string;
  readonly url: () => string;
  /** The server's process id (for its memory), while it runs. */
  readonly serverPid: () => number | undefined;
  createUser(email: string, plan?: string): Promise<{ id: number; apiKey: string }>;
  startServer(): Promise<void>;
  killServer(): Promise<void>;
  startAgent(): Promise<void>;
  killAgent(): Promise<void>;
  /** Another agent on the same server (a second device host: `--driver adb`, say), stopped with the cloud. */
  addAgent(name: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<void>;
  /** Whether the server died without being killed by us (a crash), and its output. */
  crashed(): string | undefined;
  output(): { server: string; agent: string };
  stop(): Promise<void>;
}

const HEARTBEAT_MS = 500;
/** Long enough for a server restart (a few seconds) not to cost device runs, short enough for a lost agent to be noticed in a scenario. */
const LEASE_MS = 6000;

export async function startCloud(options: CloudOptions): Promise<Cloud> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-chaos-'));
  const store = options.databaseUrl === undefined ? [] : ['--database-url', options.databaseUrl];
  const port = await freePort();
  const outputs = { server: '', agent: '' };
  let server: RunningProcess | undefined;
  let agent: RunningProcess | undefined;
  let killedServer = false;
  let agentToken: string | undefined;
  const extraAgents: RunningProcess[] = [];
  const agentFlags = options.agentFlags ?? ['--sandbox', 'none'];

  const admin = async (args: string[]) => {
    const result = await runCli(['admin', ...args, '--json', '--data-dir', path.join(dir, 'server'), ...store]);
    if (result.code !== 0) throw new Error(`devicecloud admin ${args[0]}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };
  const kill = async (process: RunningProcess | undefined) => {
    if (process === undefined || process.child.exitCode !== null || process.child.signalCode !== null) return;
    const exited = new Promise((resolve) => process.child.once('exit', resolve));
    process.child.kill('SIGKILL');
    await exited;
  };

  const cloud: Cloud = {
    dir,
    url: () => `http://127.0.0.1:${port}`,
    serverPid: () => server?.child.pid,
    createUser: (email, plan = 'GOLD') =>
      admin(['create-user', '--email', email, '--password', 'chaos-password-1', '--plan', plan]),
    async startServer() {
      if (server !== undefined) outputs.server += server.output();
      const args = ['serve', '--port', String(port), '--data-dir', path.join(dir, 'server'), '--log-level', 'warn'];
      server = startCli([
        ...args,
        '--heartbeat-ms',
        String(HEARTBEAT_MS),
        '--lease-ms',
        String(LEASE_MS),
        ...store,
        ...(options.serverFlags ?? []),
      ]);
      killedServer = false;
      await server.waitFor(/running at http/);
    },
    async killServer() {
      killedServer = true;
      await kill(server);
    },
    async startAgent() {
      agentToken ??= (await admin(['create-agent-token', '--name', 'chaos-host'])).token as string;
      if (agent !== undefined) outputs.agent += agent.output();
      agent = startCli(
        [
          'agent',
          '--server',
          cloud.url(),
          '--devices',
          String(options.devices),
          '--serial-prefix',
          'chaos',
          '--data-dir',
          path.join(dir, 'agent'),
          ...agentFlags,
        ],
        {
          DEVICECLOUD_AGENT_TOKEN: agentToken,
        },
      );
      await agent.waitFor(/registered \d+ device/);
    },
    killAgent: () => kill(agent),
    async addAgent(name, args, env = {}) {
      const { token } = await admin(['create-agent-token', '--name', name]);
      const extra = startCli(
        ['agent', '--server', cloud.url(), '--data-dir', path.join(dir, name), ...agentFlags, ...args],
        { ...env, DEVICECLOUD_AGENT_TOKEN: token as string },
      );
      extraAgents.push(extra);
      await extra.waitFor(/registered \d+ device/);
    },
    crashed() {
      if (server === undefined || killedServer || (server.child.exitCode === null && server.child.signalCode === null))
        return undefined;
      // An uncaught error prints the objects involved at length: the unindented lines say what happened.
      const summary = server
        .output()
        .split('\n')
        .filter((line) => /^\S/.test(line))
        .slice(-12)
        .join('\n');
      return `the server exited by itself (${server.child.exitCode ?? server.child.signalCode}):\n${summary}`;
    },
    output: () => ({
      server: outputs.server + (server?.output() ?? ''),
      agent: outputs.agent + (agent?.output() ?? ''),
      ...Object.fromEntries(extraAgents.map((extra, index) => [`agent-${index + 2}`, extra.output()])),
    }),
    async stop() {
      for (const extra of extraAgents) await extra.stop();
      await agent?.stop();
      await server?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return cloud;
}
