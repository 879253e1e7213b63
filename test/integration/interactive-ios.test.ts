/**
 * Interactive sessions on an iPhone played for real (issue 20, docs/api.md#interactive-sessions):
 * a server on a port, an agent with the iOS driver on the fake go-ios (and its fake
 * WebDriverAgent). A user reserves the iPhone, watches its screen, taps, types, presses home,
 * turns it, opens a URL, installs an .ipa and reads the syslog pane, then releases it; the phone
 * ends cleaned and free. A lost agent ends the session, and the agent stops WebDriverAgent.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIosDriver } from '../../src/agent/drivers/ios/index.ts';
import { GoIos } from '../../src/agent/drivers/ios/go-ios.ts';
import { goIosSigner, loadSigningSetup } from '../../src/agent/drivers/ios/signer.ts';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { FAKE_IOS, FakeIos, LAB_DEVICES, ipa, signingFolder } from '../support/fake-ios/index.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { loseAgentOfSession, readFrames, reserveDevice, sessionScreenshot } from '../support/live-frames.ts';
import { type VirtualHost, listenWithHost } from '../support/virtual-host.ts';

const IPHONE = LAB_DEVICES[0]!;
const APP_ID = 'com.example.shop';

describe.each(ENGINES)('interactive sessions on an iPhone (%s)', (engine) => {
  let h: Harness;
  let host: VirtualHost;
  let fake: FakeIos;
  let alice: TestUser;
  let deviceId: number;

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    host = await listenWithHost(h, 'live-ios', (dataDir) => {
      fake = new FakeIos(path.join(dataDir, 'fake-ios'), [IPHONE]);
      const goIos = new GoIos(FAKE_IOS, fake.env);
      const signing = loadSigningSetup(signingFolder(path.join(dataDir, 'signing')));
      return createIosDriver({
        dataDir: path.join(dataDir, 'ios'),
        goIos,
        signing,
        signer: goIosSigner(goIos, signing),
        pollMs: 100,
        bootTimeoutMs: 10_000,
      });
    });
    deviceId = host.deviceId;
    alice = await h.user({ plan: 'GOLD' });
  });
  afterEach(async () => host.stop());

  const reserve = () => reserveDevice(alice, deviceId);
  const input = (id: number, form: Record<string, string>) =>
    alice.call('POST', `/api/me/device-sessions/${id}/input`, { json: true, form });

  it('reserves the iPhone, streams its screen, sends WDA each input, installs an .ipa, releases it cleaned', async () => {
    const shop = await fixtures.file(h.ctx, alice.user, {
      name: 'shop.ipa',
      inputType: 'APPLICATION',
      osType: 'IOS',
      properties: { bundle_identifier: APP_ID },
      bytes: await ipa({ bundleId: APP_ID, executable: 'Shop', screens: ['Home', 'Cart'] }),
    });
    const apk = await fixtures.file(h.ctx, alice.user, {
      name: 'shop.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
    });
    const id = await reserve();

    // The live screen: a first frame at once, another once the phone is turned.
    let turned = false;
    const frames = await readFrames(
      `${host.url.origin}/api/me/device-sessions/${id}/live`,
      alice.key,
      (seen) => seen.length >= 2,
      async (seen) => {
        if (seen.length !== 1 || turned) return;
        turned = true;
        const answer = await input(id, { action: 'rotate', orientation: 'landscape' });
        expect(answer.status, answer.text).toBe(200);
      },
    );
    expect(frames.every((frame) => frame.subarray(1, 4).toString() === 'PNG')).toBe(true);
    expect(frames[1]!.equals(frames[0]!)).toBe(false);
    expect(fake.device(IPHONE.udid).orientation).toBe('LANDSCAPE');

    fake.clearCalls();
    const forms: Array<Record<string, string>> = [
      { action: 'rotate', orientation: 'portrait' },
      { action: 'tap', x: '300', y: '600' },
      { action: 'text', text: 'alice' },
      { action: 'key', key: 'home' },
      { action: 'openUrl', url: 'https://example.com/a' },
      { action: 'swipe', x: '600', y: '2000', toX: '600', toY: '300' },
    ];
    for (const form of forms) {
      const answer = await input(id, form);
      expect(answer.status, `${JSON.stringify(form)}: ${answer.text}`).toBe(200);
    }
    const sent = fake
      .wdaRequests()
      .filter((request) => request.method === 'POST')
      .map((request) => request.path);
    expect(sent).toEqual([
      '/session/{session}/orientation',
      '/session/{session}/actions',
      '/session/{session}/wda/keys',
      '/session/{session}/wda/pressButton',
      '/session/{session}/url',
      '/session/{session}/actions',
    ]);
    expect(fake.device(IPHONE.udid).foreground).toBe('com.apple.mobilesafari');

    // What an iPhone cannot take is a 400 that says why; an Android app is not offered to it.
    const back = await input(id, { action: 'key', key: 'back' });
    expect(back.status).toBe(400);
    expect(back.body.message).toMatch(/iPhones have no back key/);
    const off = await input(id, { action: 'tap', x: '1170', y: '5' });
    expect(off.status).toBe(400);
    expect(off.body.message).toBe('The point (1170, 5) is off the 1170x2532 screen of Apple iPhone 15');
    const android = await input(id, { action: 'install', fileId: String(apk.id) });
    expect(android.status).toBe(400);
    expect(android.body.message).toMatch(/is not an iOS app \(\.ipa\)/);

    // The .ipa: downloaded by the agent, re-signed, installed by go-ios.
    const installed = await input(id, { action: 'install', fileId: String(shop.id) });
    expect(installed.status, installed.text).toBe(200);
    expect(fake.device(IPHONE.udid).apps[APP_ID]?.signedBy).toMatch(/signed by fake go-ios/);
    expect((await sessionScreenshot(host.url.origin, alice, id)).subarray(1, 4).toString()).toBe('PNG');

    // The log pane, which follows the session: the phone's syslog as go-ios streams it, its messages only.
    const pane = new AbortController();
    const logcat = await fetch(`${host.url.origin}/api/me/device-sessions/${id}/logcat`, {
      headers: { authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}` },
      signal: pane.signal,
    });
    expect(logcat.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    let syslog = '';
    const reader = logcat.body!.getReader();
    while (!/SpringBoard\(FrontBoard\).*\n/.test(syslog)) {
      const { value, done } = await reader.read();
      if (done) break;
      syslog += Buffer.from(value).toString('utf8');
    }
    pane.abort();
    expect(syslog).toMatch(/^\w{3} +\d+ [\d:]+ Lab-iPhone-1 SpringBoard\(FrontBoard\)\[58\] <Notice>: /m);
    expect(syslog).not.toContain('"msg"');

    const released = await alice.call('POST', `/api/me/device-sessions/${id}/release`, { json: true });
    expect(released.status, released.text).toBe(200);
    await until(
      async () => (await alice.call('GET', `/api/me/device-sessions/${id}`, { json: true })).body.state,
      (state) => state === 'SUCCEEDED',
      30_000,
    );
    await until(
      () => h.database.db.selectFrom('devices').select('state').executeTakeFirst(),
      (row) => row?.state === 'IDLE',
      30_000,
    );
    // Cleaned like after a run: the app is gone; WDA and its port forward have stopped.
    const phone = fake.device(IPHONE.udid);
    expect(Object.keys(phone.apps)).not.toContain(APP_ID);
    expect(phone.wdaPort).toBeNull();
    expect(phone.orientation).toBe('PORTRAIT');
    const log = (await alice.call('GET', `/api/me/device-sessions/${id}/commands`, { json: true })).body;
    expect(log.data.map((command: { uri: string }) => command.uri)).toContain('/interactive/install');
  });

  it('a lost agent ends the session: WARNING, input refused, and the agent stops WebDriverAgent', async () => {
    const id = await reserve();
    await loseAgentOfSession(h, host.url.origin, alice, id);
    expect((await input(id, { action: 'tap', x: '1', y: '1' })).status).toBe(409);
    await until(
      () => fake.device(IPHONE.udid).wdaPort,
      (port) => port === null,
      20_000,
    );
  });
});
