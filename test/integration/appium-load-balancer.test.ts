/**
 * Appium client side behind a load balancer without affinity (docs/api.md#appium-client-side): two
 * servers on one PostgreSQL, and every request of the agent and of the client goes to the next
 * server in turn (test/support/round-robin-proxy.ts). A command the client sent to server A may
 * be taken by the agent's poll at A and answered at B: B hands the answer over through the
 * database, and A's client gets it (it used to wait for the command timeout, 10 minutes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { hubSession, shopApp } from '../support/appium-session.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { type CloudServer, postgresServers } from '../support/postgres-servers.ts';
import { type RoundRobinProxy, roundRobinProxy } from '../support/round-robin-proxy.ts';
import { type VirtualAgent, startVirtualAgent } from '../support/virtual-host.ts';

describe.runIf(ENGINES.includes('postgres'))('Appium client side behind a load balancer without affinity', () => {
  let h: Harness;
  let servers: CloudServer[];
  let balancer: RoundRobinProxy;
  let host: VirtualAgent;
  let alice: TestUser;
  let app: { id: number };
  /** Answers one server handed to the other. */
  let handedOver = 0;

  beforeAll(async () => {
    h = await createHarness('postgres', { limits: { heartbeatMs: 200, claimWaitMs: 200, leaseMs: 3000 } });
    h.setTime(Date.now());
    const handOff = h.ctx.store.webDriver.handOff;
    h.ctx.store.webDriver.handOff = async (answer) => {
      const first = await handOff(answer);
      if (first) handedOver += 1;
      return first;
    };
    servers = await postgresServers(h, 2);
    balancer = await roundRobinProxy(servers.map((server) => server.url));
    host = await startVirtualAgent(h, 'appium-lb', [balancer.url]);
    alice = await h.user({ plan: 'GOLD' });
    app = await shopApp(h.ctx, alice.user);
  });
  afterAll(async () => {
    await host.stop();
    await balancer.close();
    for (const server of servers) await server.stop();
    await h.close();
  });

  it('answers every command, wherever the agent and the client land, and logs each once', async () => {
    const hub = new URL(balancer.url);
    const driver = await hubSession(hub, {
      platformName: 'Android',
      'bitbar:options': { apiKey: alice.key, app: app.id },
    });
    const names = ['one', 'two', 'three', 'four', 'five', 'six'];
    for (const name of names) {
      const input = await driver.$('id=input');
      await input.clearValue();
      await input.setValue(name);
      await driver.$('~submit').click();
      expect(await driver.$('~message').getText()).toBe(`Hello, ${name}!`);
    }
    await driver.deleteSession();

    // Both servers served the agent, and answers crossed from one to the other.
    expect(Math.min(...balancer.counts())).toBeGreaterThan(10);
    expect(handedOver).toBeGreaterThan(0);
    const session = (await h.ctx.store.webDriver.session(driver.sessionId))!;
    await until(
      async () => (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true })).body,
      (body) => body.state === 'SUCCEEDED',
      20_000,
    );
    // Every command once in the log, answered; no answer left behind for anyone to take.
    const log = await alice.call('GET', `/api/device-sessions/${session.deviceRunId}/commands?limit=1000`, {
      json: true,
    });
    const rows = log.body.data as { uri: string }[];
    expect(rows.filter((row) => row.uri.endsWith('/text'))).toHaveLength(names.length);
    expect(rows.filter((row) => row.uri.endsWith('/click'))).toHaveLength(names.length);
    expect(await h.ctx.store.webDriver.takeHandoff(0, session.deviceRunId)).toBeUndefined();
    const left = await (h.database.db as any)
      .selectFrom('webdriver_handoffs')
      .select('command_id')
      .where('device_run_id', '=', session.deviceRunId)
      .execute();
    expect(left).toEqual([]);
  });
});
