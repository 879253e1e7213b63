/**
 * The per-device Appium server of Appium client side on real devices (src/agent/drivers/host/
 * appium-server.ts), against a fake Appium at the HTTP level (test/support/fake-appium): started
 * from PATH on a port of its own, its answers and errors relayed unchanged, the device's session id
 * in place of the cloud's, the host's capabilities (the device, the app) added, and stopped.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppiumServer } from '../../src/agent/drivers/host/appium-server.ts';

const FAKE = path.resolve(import.meta.dirname, '../support/fake-appium/server.mjs');

describe('an Appium server per device', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-appium-host-'));
    fs.mkdirSync(path.join(dir, 'bin'));
    const launcher = path.join(dir, 'bin', 'appium');
    fs.writeFileSync(launcher, `#!/bin/sh\nexec "${process.execPath}" "${FAKE}" "$@"\n`, { mode: 0o755 });
    env = { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}` };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('starts appium from PATH, relays a session to it unchanged, and stops it', async () => {
    const logPath = path.join(dir, 'appium.log');
    const server = await startAppiumServer({
      capabilities: { 'appium:udid': 'R58M123', 'appium:app': '/data/work/7/app.apk' },
      logPath,
      env,
    });
    try {
      const created = await server.handle({
        method: 'POST',
        path: '/session',
        body: { capabilities: { alwaysMatch: { platformName: 'Android', 'appium:udid': 'someone-else' } } },
      });
      expect(created.status).toBe(200);
      expect((created.body as any).value.sessionId).toBe('fake-1');
      // The cloud's session id in the path becomes the device's; the host decides the device.
      const source = await server.handle({ method: 'GET', path: '/session/0123abcd/source', body: undefined });
      // The answer passes as Appium's text; its body is parsed only when the relay looks inside.
      expect({ status: source.status, body: source.body }).toEqual({
        status: 200,
        body: { value: '<hierarchy udid="R58M123" app="/data/work/7/app.apk"/>' },
      });
      expect(JSON.parse(source.text!)).toEqual(source.body);
      const missing = await server.handle({
        method: 'POST',
        path: '/session/0123abcd/element',
        body: { using: 'id', value: 'nope' },
      });
      expect(missing.status).toBe(404);
      expect((missing.body as any).value.error).toBe('no such element');
      expect((await server.handle({ method: 'DELETE', path: '/session/0123abcd', body: undefined })).status).toBe(200);
    } finally {
      await server.stop();
    }
    await expect(fetch(`${server.url}/status`)).rejects.toThrow();
    const log = fs.readFileSync(logPath, 'utf8');
    expect(log).toContain('GET /session/fake-1/source');
  });

  it('says so when the server exits before it answers', async () => {
    await expect(
      startAppiumServer({
        capabilities: {},
        logPath: path.join(dir, 'failing.log'),
        env: { ...env, FAKE_APPIUM_FAIL: '1' },
      }),
    ).rejects.toThrow(/exited with 1 before it answered/);
    expect(fs.readFileSync(path.join(dir, 'failing.log'), 'utf8')).toContain('Could not load driver');
  });
});
