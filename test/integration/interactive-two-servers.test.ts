/**
 * Interactive sessions behind a load balancer (docs/api.md#interactive-sessions): two servers on
 * one PostgreSQL, each with its own LISTEN/NOTIFY connection. The agent talks to server A only,
 * the browser to server B only: every input crosses from B to A through the database and a
 * notification, and every frame the agent pushes to A reaches the viewer on B.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { buildApp } from '../../src/api/app.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import type { Context } from '../../src/services/context.ts';
import { type Notifier, postgresNotifier } from '../../src/store/notifier.ts';
import { until } from '../support/cloud.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { readFrames } from '../support/live-frames.ts';
import { testSandbox } from '../support/sandbox.ts';

describe.runIf(ENGINES.includes('postgres'))('interactive sessions across two servers on PostgreSQL', () => {
  let h: Harness;
  const servers: Array<{ app: FastifyInstance; url: URL; notifier: Notifier }> = [];
  let agent: RunningAgent;
  let dataDir: string;
  let alice: TestUser;
  let deviceId: number;

  beforeAll(async () => {
    h = await createHarness('postgres', { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    h.setTime(Date.now());
    for (let index = 0; index < 2; index++) {
      const notifier = await postgresNotifier({
        url: POSTGRES_URL,
        schema: h.database.schema!,
        db: h.database.db,
        log: () => undefined,
      });
      const ctx: Context = { ...h.ctx, notifier };
      const server = await buildApp({ ctx, version: 'test' });
      servers.push({ app: server, url: new URL(await server.listen({ port: 0, host: '127.0.0.1' })), notifier });
    }
    const { token } = await issueAgentToken(h.ctx, 'host-1');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-live-2-'));
    const driver = createVirtualDriver({
      dataDir: path.join(dataDir, 'virtual'),
      devices: defaultVirtualDevices(1, 0),
      sandbox: testSandbox(dataDir),
    });
    agent = startAgent({ serverUrls: [servers[0]!.url.origin], token, driver, dataDir, log: () => undefined });
    await agent.ready;
    alice = await h.user({ plan: 'GOLD' });
    const device = await until(
      () => h.database.db.selectFrom('devices').select(['id', 'state']).executeTakeFirst(),
      (row) => row?.state === 'IDLE',
      20_000,
    );
    deviceId = Number(device!.id);
  });
  afterAll(async () => {
    await agent.stop();
    for (const server of servers) {
      server.app.server.closeAllConnections();
      await server.app.close();
      await server.notifier.close();
    }
    await h.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('takes input and shows frames through the server the browser talks to, the agent on the other', async () => {
    const b = servers[1]!.url.origin;
    const auth = {
      authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}`,
      accept: 'application/json',
    };
    const post = async (suffix: string, body: Record<string, unknown>) =>
      fetch(`${b}/api/me/device-sessions${suffix}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = (await (await post('', { deviceId })).json()) as { id: number; state: string };
    expect(['WAITING', 'RUNNING']).toContain(created.state);
    await until(
      async () =>
        (
          (await (await fetch(`${b}/api/me/device-sessions/${created.id}`, { headers: auth })).json()) as {
            state: string;
          }
        ).state,
      (state) => state === 'RUNNING',
      20_000,
    );
    const keys: number[] = [];
    const frames = await readFrames(
      `${b}/api/me/device-sessions/${created.id}/live`,
      alice.key,
      (seen) => seen.length >= 3,
      async (seen) => {
        // Each frame asks for the next: a key that changes what the screen shows.
        const answer = await post(`/${created.id}/input`, {
          action: 'key',
          key: seen.length % 2 === 1 ? 'volumeUp' : 'volumeDown',
        });
        keys.push(answer.status);
      },
    );
    expect(frames).toHaveLength(3);
    expect(new Set(frames.map((frame) => frame.toString('base64'))).size).toBe(3);
    expect(keys.every((status) => status === 200)).toBe(true);
    expect((await post(`/${created.id}/release`, {})).status).toBe(200);
    await until(
      async () =>
        (
          (await (await fetch(`${b}/api/me/device-sessions/${created.id}`, { headers: auth })).json()) as {
            state: string;
          }
        ).state,
      (state) => state === 'SUCCEEDED',
      20_000,
    );
  });
});
