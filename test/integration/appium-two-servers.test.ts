/**
 * Appium client side behind a load balancer (docs/api.md#appium-client-side): two servers on one
 * PostgreSQL, each with its own LISTEN/NOTIFY connection. The agent polls server A (through a
 * forwarder, test/support/tcp-proxy.ts, that can cut it off) and falls back to server B; clients
 * may call either. A command sent to the server the agent does not poll crosses to the other
 * through the database and a notification, and its answer back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { hubSession, shopApp } from '../support/appium-session.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { type CloudServer, postgresServers } from '../support/postgres-servers.ts';
import { type TcpProxy, tcpProxy } from '../support/tcp-proxy.ts';
import { type VirtualAgent, startVirtualAgent } from '../support/virtual-host.ts';

const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

describe.runIf(ENGINES.includes('postgres'))('Appium client side across two servers on PostgreSQL', () => {
  let h: Harness;
  let servers: CloudServer[];
  let host: VirtualAgent;
  /** Server A as the agent reaches it. */
  let toA: TcpProxy;
  let alice: TestUser;
  let app: { id: number };

  beforeAll(async () => {
    // A short lease: a server gives up on a command its agent took as it moved away after one.
    h = await createHarness('postgres', { limits: { heartbeatMs: 200, claimWaitMs: 200, leaseMs: 3000 } });
    h.setTime(Date.now());
    servers = await postgresServers(h, 2);
    toA = await tcpProxy(servers[0]!.url);
    host = await startVirtualAgent(h, 'appium-2', [toA.url, servers[1]!.url.origin]);
    alice = await h.user({ plan: 'GOLD' });
    app = await shopApp(h.ctx, alice.user);
  });
  afterAll(async () => {
    await host.stop();
    await toA.cut();
    for (const server of servers) await server.stop();
    await h.close();
  });

  it('relays every command from the server the client calls to the agent polling the other one', async () => {
    const hub = servers[1]!.url;
    const driver = await hubSession(hub, {
      platformName: 'Android',
      'bitbar:options': { apiKey: alice.key, app: app.id },
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

  it('keeps a session working when its agent moves from server A to server B, commands arriving at either', async () => {
    const [a, b] = [servers[0]!.url.origin, servers[1]!.url.origin];
    const send = async (server: string, method: string, path: string, body?: unknown) => {
      const answer = await fetch(`${server}/wd/hub${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await answer.json()) as { value: Record<string, unknown> & { sessionId?: string } };
      return {
        status: answer.status,
        value: json.value,
        text: `${method} ${path} at ${server}: ${JSON.stringify(json)}`,
      };
    };
    const wd = async (server: string, method: string, path: string, body?: unknown) => {
      const answer = await send(server, method, path, body);
      expect(answer.status, answer.text).toBe(200);
      return answer.value;
    };
    const started = await wd(a, 'POST', '/session', {
      capabilities: { alwaysMatch: { platformName: 'Android', 'bitbar:options': { apiKey: alice.key, app: app.id } } },
    });
    const session = `/session/${started.sessionId}`;
    const element = async (server: string, id: string) =>
      (await wd(server, 'POST', `${session}/element`, { using: 'id', value: id }))[ELEMENT] as string;
    /** Types a name at one server, submits at the other, reads the greeting at the first. */
    const greet = async (first: string, second: string, name: string) => {
      await wd(first, 'POST', `${session}/element/${await element(second, 'input')}/clear`, {});
      await wd(first, 'POST', `${session}/element/${await element(first, 'input')}/value`, { text: name });
      await wd(second, 'POST', `${session}/element/${await element(second, 'submit')}/click`, {});
      return wd(first, 'GET', `${session}/element/${await element(first, 'message')}/text`);
    };
    expect(await greet(a, b, 'A and B')).toBe('Hello, A and B!');
    const before = toA.connections();
    expect(before).toBeGreaterThan(0);

    // The host loses server A (its clients do not): its long poll breaks, and it polls B instead.
    // A command that reaches A as that happens may be handed to the broken poll, and its answer
    // then comes nowhere: A says so once the agent has stopped coming (for a lease), rather
    // than keeping the client waiting for the command timeout (10 minutes).
    await toA.cut();
    const sent = performance.now();
    const caught = await send(a, 'POST', `${session}/element`, { using: 'id', value: 'title' });
    if (caught.status !== 200) expect(caught.value.message, caught.text).toMatch(/stopped reaching this server/);
    expect(performance.now() - sent).toBeLessThan(30_000);
    expect(await greet(b, a, 'B then A')).toBe('Hello, B then A!');
    expect(await greet(a, b, 'A then B')).toBe('Hello, A then B!');
    // Commands are quick again once server A no longer takes the agent for one of its own.
    const times: number[] = [];
    for (const server of [a, b, a, b, a]) {
      const sent = performance.now();
      await element(server, 'title');
      times.push(performance.now() - sent);
    }
    expect(times.sort((x, y) => x - y)[2]).toBeLessThan(1500);

    // Then server A stops altogether: the client goes on through B alone.
    await servers[0]!.stop();
    expect(await greet(b, b, 'B alone')).toBe('Hello, B alone!');
    await wd(b, 'DELETE', session);
    const deviceRunId = (await h.ctx.store.webDriver.session(started.sessionId!))!.deviceRunId;
    await until(
      async () => (await alice.call('GET', `/api/device-sessions/${deviceRunId}`, { json: true })).body,
      (body) => body.state === 'SUCCEEDED',
      20_000,
    );
    const log = await alice.call('GET', `/api/device-sessions/${deviceRunId}/commands?limit=100`, { json: true });
    expect(log.body.total).toBeGreaterThan(30);
  });
});
