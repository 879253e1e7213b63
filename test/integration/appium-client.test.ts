/**
 * Appium client side (issue 19, docs/api.md#appium-client-side) played for real: a server
 * listening on a port, an agent with a virtual Android device, and webdriverio from the npm
 * registry driving the device through /wd/hub: find, type, click, assert, screenshot, quit. The
 * session is then a device session of the API with its command log and screenshots.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { hubSession, shopApp } from '../support/appium-session.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { type VirtualHost, listenWithVirtualHost } from '../support/virtual-host.ts';

describe.each(ENGINES)('Appium client side through /wd/hub (%s)', (engine) => {
  let h: Harness;
  let host: VirtualHost;
  let url: URL;
  let alice: TestUser;
  let app: { id: number };

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    host = await listenWithVirtualHost(h, 'appium');
    url = host.url;
    alice = await h.user({ plan: 'GOLD' });
    app = await shopApp(h.ctx, alice.user);
  });
  afterEach(async () => host.stop());

  const connect = (options: Record<string, unknown> = {}) =>
    hubSession(url, {
      platformName: 'Android',
      'appium:automationName': 'UiAutomator2',
      'bitbar:options': { apiKey: alice.key, project: 'Shop', testrun: 'CI 42', app: app.id, ...options },
    });

  it('webdriverio finds, types, clicks, asserts, takes a screenshot and quits; the session shows in the API', async () => {
    const driver = await connect();
    const sessionId = driver.sessionId;
    expect(sessionId).toMatch(/^[0-9a-f]{32}$/);

    const input = await driver.$('id=com.example.shop:id/input');
    await input.setValue('World');
    await driver.$('~submit').click();
    expect(await driver.$('//android.widget.TextView[@content-desc="message"]').getText()).toBe('Hello, World!');
    expect(await driver.$('id=title').getText()).toBe('MainActivity');
    await driver.$('~next').click();
    expect(await driver.$('id=title').getText()).toBe('CartActivity');
    await driver.back();
    expect(await driver.$('id=title').getText()).toBe('MainActivity');
    expect(await driver.$$('android.widget.Button').length).toBe(2);
    expect(await driver.getPageSource()).toContain('resource-id="com.example.shop:id/submit"');
    expect(await driver.queryAppState('com.example.shop')).toBe(4);
    const shot = Buffer.from(await driver.takeScreenshot(), 'base64');
    expect(shot.subarray(1, 4).toString()).toBe('PNG');
    await driver.deleteSession();

    const session = (await h.ctx.store.webDriver.session(sessionId))!;
    const id = session.deviceRunId;
    const deviceSession = await until(
      async () => (await alice.call('GET', `/api/device-sessions/${id}`, { json: true })).body,
      (body) => body.state === 'SUCCEEDED',
      20_000,
    );
    expect(deviceSession.testCaseAllCount).toBe(1);
    const run = (await alice.call('GET', `/api/me/runs/${deviceSession.testRunId}`, { json: true })).body;
    expect(run.displayName).toBe('CI 42');
    expect(run.projectName).toBe('Shop');

    const commands = (await alice.call('GET', `/api/device-sessions/${id}/commands`, { json: true })).body;
    const lines = commands.data.map((command: any) => `${command.method} ${command.uri} ${command.statusCode}`);
    expect(lines[0]).toBe('POST /wd/hub/session 200');
    expect(lines).toContain(`GET /wd/hub/session/${sessionId}/screenshot 200`);
    expect(lines.at(-1)).toBe(`DELETE /wd/hub/session/${sessionId} 200`);
    expect(commands.data.every((command: any) => command.sessionId === sessionId)).toBe(true);
    const nested = await alice.call(
      'GET',
      `/api/me/projects/${run.projectId}/runs/${run.id}/device-sessions/${id}/commands`,
      { json: true },
    );
    expect(nested.body.total).toBe(commands.total);
    // The agent's own log of the session, written behind the answers: a line per command, the last included.
    const outputs = `/api/device-sessions/${id}/output-file-set/files?tag[]=logs`;
    const logs = (await alice.call('GET', outputs, { json: true })).body.data;
    const agentLog = logs.find((file: any) => file.name === 'webdriver.log');
    const logged = (await alice.call('GET', `/api/me/files/${agentLog.id}/file`)).text.trimEnd().split('\n');
    expect(logged).toHaveLength(commands.total);
    expect(logged.at(-1)).toMatch(new RegExp(`DELETE /session/${sessionId} -> 200$`));

    const screenshots = (await alice.call('GET', `/api/device-sessions/${id}/screenshots`, { json: true })).body;
    expect(screenshots.data.map((screenshot: any) => screenshot.originalName)).toEqual(['001-screenshot.png']);

    // Another user reads nothing of it.
    const bob = await h.user();
    expect((await bob.call('GET', `/api/device-sessions/${id}/commands`, { json: true })).status).toBe(404);
    expect((await bob.call('GET', `/api/device-sessions/${id}`, { json: true })).status).toBe(404);

    // Gone for the client: its session id is unknown now.
    const after = await fetch(`${url.origin}/wd/hub/session/${sessionId}/source`);
    expect(after.status).toBe(404);
    expect(((await after.json()) as any).value.error).toBe('invalid session id');
  });

  it('a session the client marks failed ends FAILED, with a screenshot of the failure', async () => {
    const driver = await connect();
    await driver.executeScript('bitbar:setResult', ['failed', 'the cart was empty']);
    await driver.deleteSession();
    const session = (await h.ctx.store.webDriver.session(driver.sessionId))!;
    const deviceSession = await until(
      async () => (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true })).body,
      (body) => body.state === 'FAILED',
      20_000,
    );
    expect(deviceSession.testCaseFailedCount).toBe(1);
    const screenshots = (
      await alice.call('GET', `/api/device-sessions/${session.deviceRunId}/screenshots`, { json: true })
    ).body;
    expect(screenshots.data.map((screenshot: any) => screenshot.originalName)).toEqual(['001-failure.png']);
    const cases = (
      await alice.call('GET', `/api/device-sessions/${session.deviceRunId}/test-case-runs`, { json: true })
    ).body;
    expect(cases.data[0].errorMessage).toContain('the cart was empty');
  });

  it('a second session waits in the queue for the busy device, visibly, then joins the same run; a third gives up at its queueTimeout', async () => {
    const first = await connect();
    const firstRun = (await h.ctx.store.webDriver.session(first.sessionId))!;
    const waiting = connect();
    const queued = await until(
      async () =>
        (await alice.call('GET', '/api/me/runs?limit=1', { json: true })).body.data.find(
          (run: any) => run.state === 'RUNNING' && run.deviceCount === 2,
        ),
      (run) => run !== undefined,
      20_000,
    );
    const sessions = (await alice.call('GET', `/api/me/runs/${queued.id}/device-sessions`, { json: true })).body.data;
    expect(sessions.map((session: any) => session.state).sort()).toEqual(['RUNNING', 'WAITING']);
    expect(queued.id).toBe((await h.ctx.store.deviceRuns.findById(firstRun.deviceRunId))!.testRunId);

    // A third one that will not wait long is refused, saying why, and leaves nothing queued.
    const impatient = await fetch(`${url.origin}/wd/hub/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        capabilities: {
          alwaysMatch: {
            platformName: 'Android',
            'bitbar:options': { apiKey: alice.key, app: app.id, queueTimeout: 1 },
          },
        },
      }),
    });
    expect(impatient.status).toBe(500);
    const refusal = ((await impatient.json()) as any).value;
    expect(refusal.error).toBe('session not created');
    expect(refusal.message).toMatch(/No device became free within 1 s.*busy with another run/);

    await first.deleteSession();
    const second = await waiting;
    expect(await second.$('id=title').getText()).toBe('MainActivity');
    await second.deleteSession();
    await until(
      async () => (await alice.call('GET', `/api/me/runs/${queued.id}`, { json: true })).body,
      (body) => body.state === 'FINISHED',
      20_000,
    );
    const ended = (await alice.call('GET', `/api/me/runs/${queued.id}/device-sessions`, { json: true })).body.data;
    expect(ended.map((session: any) => session.state)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    // The impatient session's run holds one device run, aborted when it gave up.
    const runs = (await alice.call('GET', '/api/me/runs?limit=0', { json: true })).body.data;
    expect(runs.map((each: any) => each.displayName).sort()).toEqual(['CI 42', expect.stringMatching(/^Test Run/)]);
  });

  it('a device host that goes away mid-session gives the client an error naming why, and its device run ends', async () => {
    const driver = await connect();
    const session = (await h.ctx.store.webDriver.session(driver.sessionId))!;
    await host.agent.stop();
    const deviceSession = await until(
      async () => (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true })).body,
      (body) => body.state !== 'RUNNING' && body.state !== 'FINISHING',
      20_000,
    );
    expect(deviceSession.state).toBe('WARNING');
    const answer = await fetch(`${url.origin}/wd/hub/session/${driver.sessionId}/source`);
    expect(answer.status).toBe(404);
    const error = ((await answer.json()) as any).value;
    expect(error.error).toBe('invalid session id');
    expect(error.message).toContain('agent shut down');
  });

  it('a client that goes silent loses its session after newCommandTimeout, and the device is freed', async () => {
    const driver = await hubSession(url, {
      platformName: 'Android',
      'appium:newCommandTimeout': 1,
      'bitbar:options': { apiKey: alice.key, app: app.id },
    });
    const session = (await h.ctx.store.webDriver.session(driver.sessionId))!;
    const deviceSession = await until(
      async () => (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true })).body,
      (body) => body.state === 'FAILED',
      20_000,
    );
    expect(deviceSession.testCaseFailedCount).toBe(1);
    await until(
      () => h.database.db.selectFrom('devices').select('state').executeTakeFirst(),
      (row) => row?.state === 'IDLE',
      20_000,
    );
    const late = await fetch(`${url.origin}/wd/hub/session/${driver.sessionId}/source`);
    expect(late.status).toBe(404);
    expect(((await late.json()) as any).value.error).toBe('invalid session id');
  });
});
