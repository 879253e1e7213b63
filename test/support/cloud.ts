/**
 * A devicecloud made of real processes for end-to-end tests: `devicecloud serve` and
 * `devicecloud agent` subprocesses on one data dir, users made with `devicecloud admin`, and a
 * small JSON client of the public API.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '../../src/client/api-client.ts';
import { type RunningProcess, runCli, startCli } from './cli.ts';

export { until } from './until.ts';

export interface CloudUser {
  readonly id: number;
  readonly email: string;
  readonly apiKey: string;
  api<T = any>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }>;
  upload(filePath: string): Promise<{ id: number }>;
  text(route: string): Promise<string>;
}

export class Cloud {
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-cloud-'));
  url = '';
  private server: RunningProcess | undefined;
  private readonly agents = new Map<string, RunningProcess>();

  constructor(private readonly serverFlags: readonly string[] = []) {}

  /** Starts the server; after a stop, again on the same port and data. */
  async startServer(): Promise<void> {
    const port = this.url === '' ? '0' : new URL(this.url).port;
    this.server = startCli([
      'serve',
      '--port',
      port,
      '--data-dir',
      this.dataDir,
      '--log-level',
      'warn',
      ...this.serverFlags,
    ]);
    const [, url] = await this.server.waitFor(/running at (http:\/\/\S+)/);
    this.url = url!;
  }

  /** SIGKILL: the server gets no chance to tidy up. */
  async killServer(): Promise<void> {
    const server = this.server!;
    server.child.kill('SIGKILL');
    await new Promise((resolve) =>
      server.child.exitCode === null && server.child.signalCode === null
        ? server.child.once('exit', resolve)
        : resolve(undefined),
    );
  }

  async admin(args: readonly string[]): Promise<any> {
    const result = await runCli(['admin', ...args, '--json', '--data-dir', this.dataDir]);
    if (result.code !== 0) throw new Error(`admin ${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  }

  async user(email: string, plan: 'PLATINUM' | 'GOLD' | 'SILVER', role: 'USER' | 'ADMIN' = 'USER'): Promise<CloudUser> {
    const created = await this.admin([
      'create-user',
      '--email',
      email,
      '--password',
      'e2e-password',
      '--plan',
      plan,
      '--role',
      role,
    ]);
    const auth = `Basic ${Buffer.from(`${created.apiKey}:`).toString('base64')}`;
    const api = async (method: string, route: string, body?: unknown) => {
      const response = await fetch(`${this.url}/api${route}`, {
        method,
        headers: {
          authorization: auth,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
    };
    return {
      id: created.id,
      email,
      apiKey: created.apiKey,
      api,
      upload: (filePath) => createClient({ url: this.url, apiKey: created.apiKey }).upload(filePath),
      text: async (route) => (await fetch(`${this.url}/api${route}`, { headers: { authorization: auth } })).text(),
    };
  }

  /** Starts (or restarts) an agent with virtual devices under its own data dir; `args` adds flags. */
  async startAgent(name: string, devices: number, args: readonly string[] = []): Promise<void> {
    let token: string;
    const tokenFile = path.join(this.dataDir, `${name}.token`);
    if (fs.existsSync(tokenFile)) token = fs.readFileSync(tokenFile, 'utf8');
    else {
      token = (await this.admin(['create-agent-token', '--name', name])).token;
      fs.writeFileSync(tokenFile, token);
    }
    const agent = startCli(
      [
        'agent',
        '--server',
        this.url,
        '--devices',
        String(devices),
        '--data-dir',
        path.join(this.dataDir, name),
        ...args,
      ],
      { DEVICECLOUD_AGENT_TOKEN: token },
    );
    this.agents.set(name, agent);
    await agent.waitFor(new RegExp(`registered ${devices} device`));
  }

  async killAgent(name: string): Promise<void> {
    const agent = this.agents.get(name)!;
    agent.child.kill('SIGKILL');
    await new Promise((resolve) => agent.child.once('exit', resolve));
    this.agents.delete(name);
  }

  agentOutput(name: string): string {
    return this.agents.get(name)?.output() ?? '';
  }

  async stop(): Promise<void> {
    for (const agent of this.agents.values()) await agent.stop();
    await this.server?.stop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}
