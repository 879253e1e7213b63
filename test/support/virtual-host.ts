/**
 * A device host in the test's process: one agent holding one virtual Android device (or one
 * device of another driver), waited until the device is IDLE, that the tests of Appium client side
 * and interactive sessions play against. `listenWithVirtualHost` and `listenWithHost` first make
 * the harness's app listen on a port, for that agent; their `stop` ends the agent, the harness
 * and the agent's data folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type AgentOptions, type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import type { Driver } from '../../src/agent/driver.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { until } from './cloud.ts';
import type { Harness } from './harness.ts';
import { testSandbox } from './sandbox.ts';

export interface VirtualAgent {
  readonly agent: RunningAgent;
  readonly dataDir: string;
  readonly deviceId: number;
  /** Ends the agent and removes its data folder. */
  stop(): Promise<void>;
}

export interface VirtualHost extends VirtualAgent {
  readonly url: URL;
}

const virtualDriver = (dataDir: string) =>
  createVirtualDriver({
    dataDir: path.join(dataDir, 'virtual'),
    devices: defaultVirtualDevices(1, 0),
    sandbox: testSandbox(dataDir),
  });

/** The agent of one virtual device polls the first of `serverUrls`, and the next when one does not answer. */
export function startVirtualAgent(h: Harness, prefix: string, serverUrls: readonly string[]): Promise<VirtualAgent> {
  return startHost(h, prefix, serverUrls, virtualDriver);
}

export function listenWithVirtualHost(
  h: Harness,
  prefix: string,
  options: Pick<AgentOptions, 'webdriverSocket' | 'log'> = {},
): Promise<VirtualHost> {
  return listenWithHost(h, prefix, virtualDriver, options);
}

/** The same with the one device of the driver `driverIn` makes for the agent's data folder. */
export async function listenWithHost(
  h: Harness,
  prefix: string,
  driverIn: (dataDir: string) => Driver,
  options: Pick<AgentOptions, 'webdriverSocket' | 'log'> = {},
): Promise<VirtualHost> {
  h.setTime(Date.now());
  const url = new URL(await h.app.listen({ port: 0, host: '127.0.0.1' }));
  const host = await startHost(h, prefix, [url.origin], driverIn, options);
  return {
    ...host,
    url,
    stop: async () => {
      await host.stop();
      h.app.server.closeAllConnections();
      await h.close();
    },
  };
}

async function startHost(
  h: Harness,
  prefix: string,
  serverUrls: readonly string[],
  driverIn: (dataDir: string) => Driver,
  options: Pick<AgentOptions, 'webdriverSocket' | 'log'> = {},
): Promise<VirtualAgent> {
  const { token } = await issueAgentToken(h.ctx, 'host-1');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `devicecloud-${prefix}-`));
  const agent = startAgent({ serverUrls, token, driver: driverIn(dataDir), dataDir, log: () => undefined, ...options });
  await agent.ready;
  const device = await until(
    () => h.database.db.selectFrom('devices').select(['id', 'state']).executeTakeFirst(),
    (row) => row?.state === 'IDLE',
    20_000,
  );
  return {
    agent,
    dataDir,
    deviceId: Number(device!.id),
    stop: async () => {
      await agent.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
