/**
 * A harness that listens on a port, with one agent holding one virtual Android device, waited
 * until the device is IDLE: what the tests of Appium client side and interactive sessions play
 * against. `stop` ends the agent, the harness and the agent's data folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { until } from './cloud.ts';
import type { Harness } from './harness.ts';
import { testSandbox } from './sandbox.ts';

export interface VirtualHost {
  readonly url: URL;
  readonly agent: RunningAgent;
  readonly dataDir: string;
  readonly deviceId: number;
  stop(): Promise<void>;
}

export async function listenWithVirtualHost(h: Harness, prefix: string): Promise<VirtualHost> {
  h.setTime(Date.now());
  const url = new URL(await h.app.listen({ port: 0, host: '127.0.0.1' }));
  const { token } = await issueAgentToken(h.ctx, 'host-1');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `devicecloud-${prefix}-`));
  const driver = createVirtualDriver({
    dataDir: path.join(dataDir, 'virtual'),
    devices: defaultVirtualDevices(1, 0),
    sandbox: testSandbox(dataDir),
  });
  const agent = startAgent({ serverUrls: [url.origin], token, driver, dataDir, log: () => undefined });
  await agent.ready;
  const device = await until(
    () => h.database.db.selectFrom('devices').select(['id', 'state']).executeTakeFirst(),
    (row) => row?.state === 'IDLE',
    20_000,
  );
  return {
    url,
    agent,
    dataDir,
    deviceId: Number(device!.id),
    stop: async () => {
      await agent.stop();
      h.app.server.closeAllConnections();
      await h.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
