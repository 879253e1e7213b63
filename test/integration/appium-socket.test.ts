/**
 * The WebDriver relay's WebSocket (docs/drivers.md#the-webdriver-socket): an agent serving an
 * Appium client side session takes its commands and sends its answers as frames of one socket it
 * opened, not as HTTP requests; without the socket (turned off, or broken mid-session) the same
 * session goes on over the HTTP long poll. The socket takes only agents' tokens and the
 * protocol's frames.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { WEBDRIVER_SOCKET_PATH } from '../../src/protocol/v1.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { hubSession, shopApp } from '../support/appium-session.ts';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { type Harness, createHarness } from '../support/harness.ts';
import { type VirtualHost, listenWithVirtualHost } from '../support/virtual-host.ts';

describe.each(ENGINES)('the WebDriver relay over the agent’s WebSocket (%s)', (engine) => {
  let h: Harness;
  let host: VirtualHost | undefined;
  afterEach(async () => {
    await host?.stop();
    host = undefined;
  });

  /** A session on the virtual device, and the agent's WebDriver requests over HTTP, counted. */
  async function start(options: { webdriverSocket?: boolean } = {}) {
    h = await createHarness(engine, { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    host = await listenWithVirtualHost(h, 'appium-socket', options);
    const http = { polls: 0, answers: 0 };
    h.app.server.on('request', (request: IncomingMessage) => {
      if ((request.url ?? '').endsWith('/webdriver/commands')) http.polls += 1;
      if ((request.url ?? '').endsWith('/webdriver/answers')) http.answers += 1;
    });
    const upgrades: Duplex[] = [];
    h.app.server.on('upgrade', (_request: IncomingMessage, socket: Duplex) => upgrades.push(socket));
    const alice = await h.user({ plan: 'GOLD' });
    const app = await shopApp(h.ctx, alice.user);
    const driver = await hubSession(host.url, {
      platformName: 'Android',
      'bitbar:options': { apiKey: alice.key, app: app.id },
    });
    return { driver, http, upgrades };
  }

  /** The session's command log, once its device run has ended. */
  async function commandLog(sessionId: string) {
    const session = (await h.ctx.store.webDriver.session(sessionId))!;
    await until(
      async () => (await h.ctx.store.deviceRuns.findById(session.deviceRunId))!.state,
      (state) => state === 'SUCCEEDED',
      20_000,
    );
    const { rows } = await h.ctx.store.webDriver.commands(session.deviceRunId, 0, 100);
    return rows.map((row) => `${row.method} ${row.path} ${row.status}`);
  }

  it('commands and answers travel as frames: no HTTP poll or answer once the session started', async () => {
    const { driver, http } = await start();
    const sessionId = driver.sessionId;
    const before = { ...http };
    await driver.$('id=com.example.shop:id/input').setValue('World');
    await driver.$('~submit').click();
    expect(await driver.$('//android.widget.TextView[@content-desc="message"]').getText()).toBe('Hello, World!');
    expect(
      Buffer.from(await driver.takeScreenshot(), 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    await driver.deleteSession();
    expect(http).toEqual(before);
    const log = await commandLog(sessionId);
    expect(log[0]).toBe('POST /session 200');
    expect(log).toContain(`GET /session/${sessionId}/screenshot 200`);
    expect(log.at(-1)).toBe(`DELETE /session/${sessionId} 200`);
    expect(log.length).toBeGreaterThanOrEqual(8);
  });

  it('an agent without the socket relays the same session over HTTP', async () => {
    const { driver, http } = await start({ webdriverSocket: false });
    const before = http.answers;
    await driver.$('~submit').click();
    expect(await driver.$('id=title').getText()).toBe('MainActivity');
    await driver.deleteSession();
    expect(http.answers - before).toBeGreaterThanOrEqual(3);
  });

  it('a socket broken mid-session: the session goes on over HTTP', async () => {
    const { driver, http, upgrades } = await start();
    const sessionId = driver.sessionId;
    expect(await driver.$('id=title').getText()).toBe('MainActivity');
    expect(upgrades).toHaveLength(1);
    const before = http.answers;
    upgrades[0]!.destroy();
    await driver.$('~next').click();
    expect(await driver.$('id=title').getText()).toBe('CartActivity');
    await driver.deleteSession();
    expect(http.answers - before).toBeGreaterThanOrEqual(3);
    expect((await commandLog(sessionId)).at(-1)).toBe(`DELETE /session/${sessionId} 200`);
  });

  it('takes only an agent’s token, and only the protocol’s frames', async () => {
    h = await createHarness(engine);
    const origin = (await h.app.listen({ port: 0, host: '127.0.0.1' })).replace(/^http/, 'ws');
    try {
      const refused = (headers: Record<string, string>, path = WEBDRIVER_SOCKET_PATH) =>
        new Promise<number>((resolve, reject) => {
          const ws = new WebSocket(`${origin}${path}`, { headers });
          ws.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
          ws.on('open', () => reject(new Error('opened')));
          ws.on('error', () => undefined);
        });
      expect(await refused({})).toBe(401);
      expect(await refused({ authorization: 'Bearer not-a-token' })).toBe(401);
      const { token } = await issueAgentToken(h.ctx, 'socket-host');
      expect(await refused({ authorization: `Bearer ${token}` }, '/agent/v1/elsewhere')).toBe(404);

      const ws = new WebSocket(`${origin}${WEBDRIVER_SOCKET_PATH}`, { headers: { authorization: `Bearer ${token}` } });
      await new Promise((resolve) => ws.once('open', resolve));
      const closed = new Promise<number>((resolve) => ws.once('close', resolve));
      ws.send(JSON.stringify({ type: 'answer', deviceRunId: 1, commandId: 1, status: 200 }));
      expect(await closed).toBe(1007);

      // A session the agent does not hold: refused, so that it would poll over HTTP and hear why.
      const again = new WebSocket(`${origin}${WEBDRIVER_SOCKET_PATH}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await new Promise((resolve) => again.once('open', resolve));
      const frame = new Promise<unknown>((resolve) =>
        again.once('message', (data) => resolve(JSON.parse(String(data)))),
      );
      again.send(JSON.stringify({ type: 'serve', deviceRunId: 424242 }));
      expect(await frame).toMatchObject({ type: 'refused', deviceRunId: 424242 });
      again.close();

      // Its token replaced, an open socket closes (docs/security.md#agent-tokens).
      const held = new WebSocket(`${origin}${WEBDRIVER_SOCKET_PATH}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await new Promise((resolve) => held.once('open', resolve));
      const ended = new Promise<number>((resolve) => held.once('close', resolve));
      await issueAgentToken(h.ctx, 'socket-host');
      expect(await ended).toBe(1008);
    } finally {
      h.app.server.closeAllConnections();
      await h.close();
    }
  });
});
