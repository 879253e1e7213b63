/**
 * Interactive sessions (issue 20, docs/api.md#interactive-sessions) played for real: a server on
 * a port, an agent with a virtual Android device. A user reserves the device, watches its live
 * screen, taps, types, installs an app and releases it; the device ends cleaned and free. Another
 * user can neither see, control, watch nor release it; bad input is a 400 naming what is wrong.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import {
  type ElementBox,
  SCREEN_SIZES,
  hitTest,
  renderScreen,
  turned,
} from '../../src/agent/drivers/virtual/screen/render.ts';
import { appScreen, homeScreen } from '../../src/agent/drivers/virtual/screen/ui-model.ts';
import { until } from '../support/cloud.ts';
import { loseAgentOfSession, readFrames, reserveDevice, sessionScreenshot } from '../support/live-frames.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { type VirtualHost, listenWithVirtualHost } from '../support/virtual-host.ts';

describe.each(ENGINES)('interactive sessions (%s)', (engine) => {
  let h: Harness;
  let host: VirtualHost;
  let dataDir: string;
  let url: URL;
  let alice: TestUser;
  let mallory: TestUser;
  let deviceId: number;

  // The first case timed out once in a whole-suite run and passed alone every time since: what the
  // agent said is where the next failure should be read.
  let agentLog: string[] = [];
  /** What the test did and when: with the commands' states, where a hang was. */
  let trace: string[] = [];
  beforeEach(async () => {
    agentLog = [];
    trace = [];
    onTestFailed(async () => console.error(`[interactive-sessions] ${await whatHappened()}`));
    h = await createHarness(engine, { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    host = await listenWithVirtualHost(h, 'live', {
      log: (line) => agentLog.push(`${new Date().toISOString()} ${line}`),
    });
    ({ url, dataDir, deviceId } = host);
    alice = await h.user({ plan: 'GOLD' });
    mallory = await h.user({ plan: 'GOLD' });
  });
  afterEach(async () => host.stop());

  /** The agent's last lines, the test's steps and the session's commands not answered. */
  async function whatHappened(): Promise<string> {
    const waiting = await h.database.db
      .selectFrom('webdriver_commands')
      .select(['id', 'path', 'state', 'create_time'])
      .where('state', '!=', 'ANSWERED')
      .execute()
      .catch((error: Error) => error.message);
    return [
      `the agent's last lines:\n${agentLog.slice(-40).join('\n')}`,
      `the test's steps:\n${trace.slice(-40).join('\n')}`,
      `the commands not answered: ${JSON.stringify(waiting)}`,
    ].join('\n');
  }

  /**
   * The first case hung until vitest's timeout in whole-suite runs, where only the summary's error
   * message reaches CI's excerpt: it fails a little earlier with what it saw in that message.
   */
  const withinDeadline = (body: () => Promise<void>) => async () => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => void whatHappened().then((seen) => reject(new Error(`no end after 80 s; ${seen}`))),
        80_000,
      );
    });
    try {
      await Promise.race([body(), deadline]);
    } finally {
      clearTimeout(timer);
    }
  };

  const reserve = (user: TestUser, form: Record<string, string> = {}) => reserveDevice(user, deviceId, form);
  const input = async (user: TestUser, id: number, form: Record<string, string>) => {
    trace.push(`${new Date().toISOString()} input ${form.action}`);
    const answer = await user.call('POST', `/api/me/device-sessions/${id}/input`, { json: true, form });
    trace.push(`${new Date().toISOString()} input ${form.action}: ${answer.status}`);
    return answer;
  };

  it(
    'reserves a device, streams its screen, taps, types, installs, releases; the device ends cleaned and free',
    withinDeadline(async () => {
      const app = await fixtures.file(h.ctx, alice.user, {
        name: 'shop.apk',
        inputType: 'APPLICATION',
        osType: 'ANDROID',
        properties: {
          package_name: 'com.example.shop',
          main_activity: 'com.example.shop.SignInActivity',
          activities: 'com.example.shop.SignInActivity,com.example.shop.CartActivity',
        },
      });
      const id = await reserve(alice);
      trace.push(`${new Date().toISOString()} reserved ${id}`);

      // The live screen: a first frame at once, a new one after the install changes the screen.
      const live = `${url.origin}/api/me/device-sessions/${id}/live`;
      let installed = false;
      const frames = await readFrames(
        live,
        alice.key,
        (seen) => seen.length >= 2,
        async (seen) => {
          trace.push(`${new Date().toISOString()} frame ${seen.length}`);
          if (seen.length !== 1 || installed) return;
          installed = true;
          const answer = await input(alice, id, { action: 'install', fileId: String(app.id) });
          expect(answer.status, answer.text).toBe(200);
          expect(answer.body.uri).toBe('/interactive/install');
          expect(answer.body.statusCode).toBe(200);
        },
      );
      expect(frames.every((frame) => frame.subarray(1, 4).toString() === 'PNG')).toBe(true);
      expect(frames[1]!.equals(frames[0]!)).toBe(false);

      // The home screen lists the apps, sorted: the shop is the third row; a tap on it opens the app.
      const home = homeScreen('ANDROID', 'x', ['com.android.chrome', 'com.android.settings', 'com.example.shop']);
      const y = Array.from({ length: 640 }, (_, index) => index).find((at) => {
        const hit = hitTest(home, SCREEN_SIZES.ANDROID, 100, at);
        return hit?.kind === 'element' && hit.row === 2;
      })!;
      const screenshot = async () => {
        trace.push(`${new Date().toISOString()} screenshot`);
        return sessionScreenshot(url.origin, alice, id);
      };
      const before = await screenshot();
      expect((await input(alice, id, { action: 'tap', x: '100', y: String(y + 10) })).status).toBe(200);
      const signIn = await screenshot();
      expect(signIn.equals(before)).toBe(false);

      // The sign-in screen: a tap on the user name field, text typed into it, the Sign in button.
      expect((await input(alice, id, { action: 'text', text: 'alice' })).status).toBe(200);
      const typed = await screenshot();
      expect(typed.equals(signIn)).toBe(false);
      expect((await input(alice, id, { action: 'key', key: 'enter' })).status).toBe(200);
      expect((await screenshot()).equals(typed)).toBe(false);
      expect((await input(alice, id, { action: 'key', key: 'back' })).status).toBe(200);
      expect((await input(alice, id, { action: 'rotate', orientation: 'landscape' })).status).toBe(200);

      // Turned, the screen is drawn in landscape (640x320) and a tap lands on what is drawn there:
      // the Settings app's form reflows into two columns, its Save button right of the upright width.
      const landscape = await screenshot();
      expect([landscape.readUInt32BE(16), landscape.readUInt32BE(20)]).toEqual([640, 320]);
      const wide = turned(SCREEN_SIZES.ANDROID, 'landscape');
      const settingsRow = Array.from({ length: 320 }, (_, index) => index).find((at) => {
        const hit = hitTest(home, wide, 100, at);
        return hit?.kind === 'element' && hit.row === 1;
      })!;
      expect((await input(alice, id, { action: 'tap', x: '100', y: String(settingsRow + 10) })).status).toBe(200);
      const settings = await screenshot();
      expect(settings.equals(landscape)).toBe(false);
      const boxes: ElementBox[] = [];
      const form = appScreen('ANDROID', 'com.android.settings', 'SettingsActivity');
      renderScreen(form, wide, { time: '00:00', battery: 0 }, boxes);
      const save = boxes.find((box) => {
        const element = form.elements[box.index]!;
        return element.kind === 'button' && element.label === 'Save';
      })!;
      expect(save.left).toBeGreaterThanOrEqual(SCREEN_SIZES.ANDROID.width);
      const pressed = await input(alice, id, { action: 'tap', x: String(save.left + 20), y: String(save.top + 10) });
      expect(pressed.status, pressed.text).toBe(200);
      const saved = await screenshot();
      expect(saved.equals(settings)).toBe(false);
      expect([saved.readUInt32BE(16), saved.readUInt32BE(20)]).toEqual([640, 320]);
      expect((await input(alice, id, { action: 'key', key: 'back' })).status).toBe(200);
      const below = await input(alice, id, { action: 'tap', x: '100', y: '400' });
      expect(below.status).toBe(400);
      expect(below.body.message).toMatch(/off the 640x320 screen/);
      expect((await input(alice, id, { action: 'openUrl', url: 'https://example.com/a' })).status).toBe(200);
      expect((await input(alice, id, { action: 'swipe', x: '5', y: '300', toX: '200', toY: '300' })).status).toBe(200);

      const released = await alice.call('POST', `/api/me/device-sessions/${id}/release`, { json: true });
      expect(released.status, released.text).toBe(200);
      const ended = await until(
        async () => (await alice.call('GET', `/api/me/device-sessions/${id}`, { json: true })).body,
        (body) => body.state === 'SUCCEEDED',
        20_000,
      );
      expect(ended.type).toBe('MANUAL');
      // The list filters on the type as shown: interactive sessions are the manual ones.
      const manual = await alice.call('GET', '/api/v2/me/device-sessions?filter=type_eq_MANUAL', { json: true });
      expect((manual.body.data as Array<{ id: number }>).map((session) => session.id)).toEqual([id]);
      const automatic = await alice.call('GET', '/api/v2/me/device-sessions?filter=type_eq_AUTOMATIC', { json: true });
      expect((automatic.body.data as Array<{ id: number }>).map((session) => session.id)).not.toContain(id);
      await until(
        () => h.database.db.selectFrom('devices').select('state').executeTakeFirst(),
        (row) => row?.state === 'IDLE',
        20_000,
      );
      const devices = path.join(dataDir, 'virtual', 'devices');
      const installedApps = fs.readdirSync(path.join(devices, fs.readdirSync(devices)[0]!, 'apps'));
      expect(installedApps).not.toContain('com.example.shop');

      // The device's log pane: a line per input and what came to the front; the text typed is not in it.
      const logcat = await alice.call('GET', `/api/me/device-sessions/${id}/logcat`);
      expect(logcat.status).toBe(200);
      expect(logcat.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(logcat.text).toMatch(/^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} I\/Input: install shop\.apk$/m);
      expect(logcat.text).toContain('I/ActivityManager: Displayed com.example.shop');
      expect(logcat.text).toContain('I/Input: text (5 characters)');
      expect(logcat.text).not.toContain('alice');

      // Every action is in the session's log.
      const log = (await alice.call('GET', `/api/me/device-sessions/${id}/commands`, { json: true })).body;
      const actions = log.data.map((command: any) => command.uri);
      expect(actions).toEqual([
        '/interactive/install',
        '/interactive/screenshot',
        '/interactive/tap',
        '/interactive/screenshot',
        '/interactive/text',
        '/interactive/screenshot',
        '/interactive/key',
        '/interactive/screenshot',
        '/interactive/key',
        '/interactive/rotate',
        '/interactive/screenshot',
        '/interactive/tap',
        '/interactive/screenshot',
        '/interactive/tap',
        '/interactive/screenshot',
        '/interactive/key',
        '/interactive/tap',
        '/interactive/openUrl',
        '/interactive/swipe',
        '/interactive/release',
      ]);
    }),
  );

  it('another user can neither see, control, watch nor release a session; bad input is a clear 400', async () => {
    const id = await reserve(alice);
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/input?action=tap&x=1&y=1'],
      ['POST', '/screenshot'],
      ['GET', '/live'],
      ['GET', '/logcat'],
      ['POST', '/release'],
      ['GET', '/commands'],
    ] as const) {
      const answer = await mallory.call(method, `/api/me/device-sessions/${id}${suffix}`, { json: true });
      expect(answer.status, `${method} ${suffix}`).toBe(404);
    }
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ action: 'jump' }, 'action', /one of tap, longPress/],
      [{ action: 'tap', x: '-1', y: '3' }, 'x', /between 0 and/],
      [{ action: 'tap', x: '5000', y: '3' }, 'x', /off the 320x640 screen/],
      [{ action: 'tap', y: '3' }, 'x', /'x' is required/],
      [{ action: 'text', text: 'x'.repeat(501) }, 'text', /longer than 500/],
      [{ action: 'key', key: 'selfDestruct' }, 'key', /home, back, power/],
      [{ action: 'openUrl', url: 'file:///etc/passwd' }, 'url', /http or https/],
      [{ action: 'install', fileId: '999999' }, 'fileId', /not found|File/],
    ];
    for (const [form, , message] of cases) {
      const answer = await input(alice, id, form);
      expect([400, 404], JSON.stringify(form)).toContain(answer.status);
      expect(answer.body.message, JSON.stringify(form)).toMatch(message);
    }
    expect((await alice.call('POST', '/api/me/device-sessions', { json: true, form: {} })).body.message).toMatch(
      /deviceId/,
    );
    const tooLong = await alice.call('POST', '/api/me/device-sessions', {
      json: true,
      form: { deviceId: String(deviceId), timeout: String(24 * 3600) },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.message).toMatch(/GOLD plan allows sessions of 60 to 3600/);

    // Another user's reservation of the same device waits its turn, and takes no input meanwhile.
    const queued = await mallory.call('POST', '/api/me/device-sessions', {
      json: true,
      form: { deviceModelId: String(deviceId) },
    });
    expect(queued.status).toBe(201);
    expect(queued.body.state).toBe('WAITING');
    const early = await input(mallory, queued.body.id, { action: 'key', key: 'home' });
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/WAITING/);

    // An admin may end anyone's session; the device then goes to the next in line.
    const admin = await h.user({ role: 'ADMIN' });
    expect((await admin.call('POST', `/api/me/device-sessions/${id}/release`, { json: true })).status).toBe(200);
    await until(
      async () => (await alice.call('GET', `/api/me/device-sessions/${id}`, { json: true })).body.state,
      (state) => state === 'SUCCEEDED',
      20_000,
    );
    await until(
      async () => (await mallory.call('GET', `/api/me/device-sessions/${queued.body.id}`, { json: true })).body.state,
      (state) => state === 'RUNNING',
      20_000,
    );
    expect((await input(alice, queued.body.id, { action: 'key', key: 'home' })).status).toBe(404);
    expect((await mallory.call('POST', `/api/me/device-sessions/${queued.body.id}/release`)).status).toBe(200);
  });

  it('a lost agent ends the session cleanly: WARNING, the live stream ends, input is refused', async () => {
    const id = await reserve(alice);
    await loseAgentOfSession(h, url.origin, alice, id);
    const late = await input(alice, id, { action: 'tap', x: '1', y: '1' });
    expect(late.status).toBe(409);
    expect((await alice.call('POST', `/api/me/device-sessions/${id}/release`, { json: true })).body.state).toBe(
      'WARNING',
    );
  });
});
