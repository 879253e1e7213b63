/**
 * Appium client side behind a load balancer (docs/api.md#appium-client-side): two servers on one
 * PostgreSQL, each with its own LISTEN/NOTIFY connection. The agent polls server A only, the
 * webdriverio client talks to server B only: every command crosses from B to A through the
 * database and a notification, and every answer back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remote } from 'webdriverio';
import { type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { buildApp } from '../../src/api/app.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import type { Context } from '../../src/services/context.ts';
import { type Notifier, postgresNotifier } from '../../src/store/notifier.ts';
import { until } from '../support/cloud.ts';
import { ENGINES, POSTGRES_URL } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { testSandbox } from '../support/sandbox.ts';

describe.runIf(ENGINES.includes('postgres'))('Appium client side across two servers on PostgreSQL', () => {
  let h: Harness;
  const servers: Array<{ app: FastifyInstance; url: URL; notifier: Notifier }> = [];
  let agent: RunningAgent;
  let dataDir: string;
  let alice: TestUser;
  let app: { id: number };

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
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-appium-2-'));
    const driver = createVirtualDriver({
      dataDir: path.join(dataDir, 'virtual'),
      devices: defaultVirtualDevices(1, 0),
      sandbox: testSandbox(dataDir),
    });
    agent = startAgent({ serverUrls: [servers[0]!.url.origin], token, driver, dataDir, log: () => undefined });
    await agent.ready;
    alice = await h.user({ plan: 'GOLD' });
    await until(
      () => h.database.db.selectFrom('devices').select('state').executeTakeFirst(),
      (row) => row?.state === 'IDLE',
      20_000,
    );
    app = await fixtures.file(h.ctx, alice.user, {
      name: 'shop.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example.shop', activities: 'com.example.shop.MainActivity' },
    });
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

  it('relays every command from the server the client calls to the agent polling the other one', async () => {
    const hub = servers[1]!.url;
    const driver = await remote({
      hostname: hub.hostname,
      port: Number(hub.port),
      path: '/wd/hub',
      logLevel: 'silent',
      connectionRetryCount: 0,
      capabilities: {
        platformName: 'Android',
        'bitbar:options': { apiKey: alice.key, app: app.id },
      } as WebdriverIO.Capabilities,
    });
    await (await driver.$('id=input')).setValue('both servers');
    await driver.$('~submit').click();
    expect(await driver.$('~message').getText()).toBe('Hello, both servers!');
    // Woken by notifications, not by the pollers' own rechecks (the agent's every 5 s): a
    // lost wake-up would make the median command take seconds.
    const message = await driver.$('~message');
    const times: number[] = [];
    for (let index = 0; index < 7; index++) {
      const started = performance.now();
      await message.getText();
      times.push(performance.now() - started);
    }
    expect(times.sort((a, b) => a - b)[3]).toBeLessThan(1500);
    // The session is known to either server: a client behind a load balancer may reach A next.
    const viaA = await fetch(`${servers[0]!.url.origin}/wd/hub/session/${driver.sessionId}/element`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ using: 'accessibility id', value: 'title' }),
    });
    expect(viaA.status).toBe(200);
    await driver.deleteSession();
    const session = (await h.ctx.store.webDriver.session(driver.sessionId))!;
    await until(
      async () => (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true })).body,
      (body) => body.state === 'SUCCEEDED',
      20_000,
    );
  });
});
