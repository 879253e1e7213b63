/**
 * Appium client side against a real Appium 3 server (issue 19): the `appium` package with
 * `@appium/fake-driver` (Appium's own driver for testing Appium), started per session by the
 * device host's serveThroughAppium exactly as for a phone, on a device host that is a process of
 * its own (test/support/appium-host.ts) so that it can be killed. webdriverio drives it through
 * /wd/hub. The fake Appium (test/support/fake-appium) stays for the fast tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTimeOf } from '../../src/agent/drivers/host/process-tree.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { appiumPidFile } from '../support/appium-host.ts';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { hubSession, shopApp } from '../support/appium-session.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const HOST = path.resolve(import.meta.dirname, '../support/appium-host.ts');
/** Starting Appium 3 takes a few seconds idle, much longer on a loaded 2-core machine. */
const BUDGET = 180_000;

describe.each(ENGINES)('Appium client side through a real Appium 3 server (%s)', (engine) => {
  let h: Harness;
  let url: URL;
  let token: string;
  let dataDir: string;
  let host: ChildProcess;
  let alice: TestUser;
  let app: { id: number };

  const startHost = async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', HOST, url.origin, token, dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    await until(
      () => output,
      (text) => text.includes('appium host ready') || child.exitCode !== null,
      60_000,
    );
    if (child.exitCode !== null) throw new Error(`the device host exited: ${output}`);
    return child;
  };
  const deviceState = async () => (await h.database.db.selectFrom('devices').select('state').executeTakeFirst())?.state;
  const cleanings = () => {
    const file = path.join(dataDir, 'cleaned.log');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
  };
  /** The Appium server of the session running now (appium-server.ts keeps its pid while it runs). */
  const appiumPids = () => {
    const file = appiumPidFile(dataDir);
    return fs.existsSync(file) ? [Number(fs.readFileSync(file, 'utf8').split(' ')[0])] : [];
  };
  /** Not a zombie either: an orphan's parent may be slow to reap it. */
  const alive = (pid: number) => startTimeOf(pid) !== undefined;

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    h.setTime(Date.now());
    url = new URL(await h.app.listen({ port: 0, host: '127.0.0.1' }));
    ({ token } = await issueAgentToken(h.ctx, 'appium-host'));
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-appium-real-'));
    host = await startHost();
    alice = await h.user({ plan: 'GOLD' });
    // Installed by no one: the host's capabilities give the fake driver its own app (an XML screen).
    app = await shopApp(h.ctx, alice.user);
    await until(deviceState, (state) => state === 'IDLE', 60_000);
  }, BUDGET);
  afterEach(async () => {
    if (host.exitCode === null && host.signalCode === null) {
      const gone = new Promise((resolve) => host.once('exit', resolve));
      host.kill('SIGTERM');
      await gone;
    }
    // An Appium server orphaned by a killed host: its whole process group.
    for (const pid of appiumPids().filter(alive)) process.kill(-pid, 'SIGKILL');
    h.app.server.closeAllConnections();
    await h.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, BUDGET);

  const connect = (extra: Record<string, unknown> = {}) =>
    hubSession(url, {
      platformName: 'Android',
      'appium:automationName': 'UiAutomator2',
      'bitbar:options': { apiKey: alice.key, project: 'Real Appium', testrun: 'fake driver', app: app.id },
      ...extra,
    });

  it(
    'webdriverio finds, types, clicks and reads on the fake driver; Appium errors come back unchanged; quit ends the session',
    async () => {
      const driver = await connect();
      const input = await driver.$('~input');
      await input.setValue('through the relay');
      expect(await input.getText()).toBe('through the relay');
      const submit = await driver.$('id=submit');
      await submit.click();
      await submit.click();
      expect(await submit.getAttribute('clicks')).toBe('2');
      // Found again by XPath: the same element, with what was typed into it.
      expect(await driver.$('//MockInputField').getText()).toBe('through the relay');
      expect(await driver.getPageSource()).toContain('<MockButton id="submit"');
      expect(
        Buffer.from(await driver.takeScreenshot(), 'base64')
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');

      // Appium's own error, status and all, with the fake driver's stack trace.
      const missing = await fetch(`${url.origin}/wd/hub/session/${driver.sessionId}/element`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ using: 'id', value: 'nowhere' }),
      });
      expect(missing.status).toBe(404);
      const error = ((await missing.json()) as any).value;
      expect(error.error).toBe('no such element');
      expect(error.message).toBe('An element could not be located on the page using the given search parameters.');
      expect(error.stacktrace).toContain('FakeDriver');

      await driver.deleteSession();
      const session = (await h.ctx.store.webDriver.session(driver.sessionId))!;
      const deviceSession = await until(
        async () => (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true })).body,
        (body) => body.state === 'SUCCEEDED',
        60_000,
      );
      expect(deviceSession.testCaseAllCount).toBe(1);
      const commands = (
        await alice.call('GET', `/api/device-sessions/${session.deviceRunId}/commands?limit=0`, { json: true })
      ).body;
      const lines = commands.data.map((command: any) => `${command.method} ${command.statusCode}`);
      expect(lines).toContain('POST 404');
      expect(lines.at(-1)).toBe('DELETE 200');
      // The session's Appium server is stopped with it, and the phone is cleaned and free again.
      await until(deviceState, (state) => state === 'IDLE', 60_000);
      expect(appiumPids().filter(alive)).toEqual([]);
    },
    BUDGET,
  );

  it(
    'a client killed mid-session frees the device at its newCommandTimeout, and its Appium server stops',
    async () => {
      const script = `
        const answer = await fetch(process.argv[1] + '/wd/hub/session', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ capabilities: { alwaysMatch: {
            platformName: 'Android', 'appium:newCommandTimeout': 2, 'bitbar:options': { apiKey: process.argv[2], app: Number(process.argv[3]) } } } }),
        });
        console.log(JSON.stringify(await answer.json()));
        setInterval(() => undefined, 1000);`;
      const client = spawn(
        process.execPath,
        ['--input-type=module', '-e', script, url.origin, alice.key, String(app.id)],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let output = '';
      client.stdout!.on('data', (chunk) => (output += chunk));
      await until(
        () => output,
        (text) => text.includes('\n') || client.exitCode !== null,
        BUDGET,
      );
      const sessionId = (JSON.parse(output) as any).value.sessionId as string;
      expect(sessionId).toMatch(/^[0-9a-f]{32}$/);
      const started = appiumPids();
      expect(started.filter(alive)).toHaveLength(1);
      client.kill('SIGKILL');

      const session = (await h.ctx.store.webDriver.session(sessionId))!;
      const deviceSession = await until(
        async () => (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true })).body,
        (body) => body.state === 'FAILED',
        60_000,
      );
      expect(deviceSession.testCaseFailedCount).toBe(1);
      await until(deviceState, (state) => state === 'IDLE', 60_000);
      expect(started.filter(alive)).toEqual([]);
    },
    BUDGET,
  );

  it(
    'a device host killed mid-session gives the waiting client an error; restarted, it cleans the phone',
    async () => {
      const driver = await connect();
      const session = (await h.ctx.store.webDriver.session(driver.sessionId))!;
      expect(await driver.getPageSource()).toContain('Hello from the fake app');
      const cleanedBefore = cleanings();
      const [orphan] = appiumPids();
      expect(alive(orphan!)).toBe(true);

      const gone = new Promise((resolve) => host.once('exit', resolve));
      host.kill('SIGKILL');
      await gone;
      // A command sent now waits for a host that is not there, until the cloud gives the session up.
      const waiting = fetch(`${url.origin}/wd/hub/session/${driver.sessionId}/source`);
      host = await startHost();
      const answer = await waiting;
      expect(answer.status).toBe(404);
      const error = ((await answer.json()) as any).value;
      expect(error.error).toBe('invalid session id');
      expect(error.message).toMatch(/The session ended \(.+\)/);

      const deviceSession = (await alice.call('GET', `/api/device-sessions/${session.deviceRunId}`, { json: true }))
        .body;
      expect(['WARNING', 'FAILED']).toContain(deviceSession.state);
      await until(deviceState, (state) => state === 'IDLE', 60_000);
      expect(cleanings()).toBeGreaterThan(cleanedBefore);
      // The Appium server the killed host left running was stopped by the cleaning.
      expect(fs.readFileSync(path.join(dataDir, 'cleaned.log'), 'utf8')).toContain(
        `stopped the Appium server (pid ${orphan})`,
      );
      expect(alive(orphan!)).toBe(false);
    },
    BUDGET,
  );
});
