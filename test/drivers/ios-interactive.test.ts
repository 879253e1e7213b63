/**
 * Interactive sessions on an iPhone of the fake go-ios (docs/api.md#interactive-sessions): WDA is
 * started through go-ios, each input reaches WebDriverAgent as the route a real WDA takes (in its
 * points: screenshot pixels over the screen's scale), an uploaded .ipa is re-signed and installed
 * with go-ios, the log pane is `ios syslog`, keys an iPhone lacks are refused before anything is
 * sent, and the phone is put back upright and unlocked when the session ends.
 */
import { describe, expect, it } from 'vitest';
import { InputRefused, type InteractiveDevice, type InteractiveEnd } from '../../src/agent/driver.ts';
import { recorder } from './conformance.ts';
import { APP_ID, PHONE_1, app, called, job, world, iosFiles } from './ios-world.ts';

iosFiles();

describe('ios driver: interactive sessions', () => {
  it('sends touches, text, buttons, rotation, URLs and installs to WebDriverAgent and go-ios', async () => {
    const w = world();
    await w.driver.listDevices();
    const { context, steps } = recorder();
    const seen: { frames: Buffer[]; refused: string[]; shot?: unknown; log: string[]; installed?: unknown } = {
      frames: [],
      refused: [],
      log: [],
    };
    const upload = await app();
    const result = await w.driver.execute(job({ kind: 'interactive', app: null, tests: null }), {
      ...context,
      interactive: {
        async serve(device: InteractiveDevice): Promise<InteractiveEnd> {
          expect(device.frameIntervalMs).toBeGreaterThanOrEqual(100);
          seen.frames.push(await device.frame());
          // The log pane: go-ios' syslog lines, their message only.
          const stopLog = new AbortController();
          for await (const line of device.log!(stopLog.signal)) {
            seen.log.push(line);
            if (seen.log.length === 3) stopLog.abort();
          }
          w.fake.clearCalls();
          // The phone is an iPhone 15 (390x844 points at 3x): its screenshots are 1170x2532 pixels.
          await device.input({ action: 'tap', x: 300, y: 600 });
          await device.input({ action: 'longPress', x: 30, y: 60, durationMs: 800 });
          await device.input({ action: 'swipe', x: 600, y: 2000, toX: 600, toY: 300, durationMs: 250 });
          await device.input({ action: 'text', text: 'café ☕' });
          for (const key of ['home', 'volumeUp', 'volumeDown', 'power', 'power', 'enter'] as const)
            await device.input({ action: 'key', key });
          await device.input({ action: 'rotate', orientation: 'landscape' });
          seen.frames.push(await device.frame());
          // Turned, the screen is 2532 wide: a point right of the upright width is on it now.
          await device.input({ action: 'tap', x: 2400, y: 100 });
          await device.input({ action: 'openUrl', url: 'https://example.com/?q=a b' });
          seen.installed = await device.input({ action: 'install', app: upload });
          seen.shot = await device.input({ action: 'screenshot' });
          for (const input of [
            { action: 'tap', x: 100, y: 1170 },
            { action: 'key', key: 'back' },
            { action: 'key', key: 'menu' },
          ] as const)
            await device.input(input).catch((error: Error) => {
              expect(error).toBeInstanceOf(InputRefused);
              seen.refused.push(error.message);
            });
          return { reason: 'released', inputs: 18, frames: 2, log: 'interactive.log' };
        },
      },
    });
    expect(result.failReason).toBeNull();
    expect(steps).toEqual(['PREPARING', 'RUNNING']);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => testCase.methodName)).toEqual(['session on Apple iPhone 15']);

    // What the session did, less what it only looked at (screenshots, the screen's size, the lock).
    const touches = w.fake.wdaRequests().filter((request) => request.method !== 'GET');
    const pointer = (actions: unknown[]) => ({
      actions: [{ type: 'pointer', id: 'finger1', parameters: { pointerType: 'touch' }, actions }],
    });
    expect(touches.map((request) => [request.method, request.path, request.body])).toEqual([
      [
        'POST',
        '/session/{session}/actions',
        pointer([
          { type: 'pointerMove', duration: 0, x: 100, y: 200 },
          { type: 'pointerDown', button: 0 },
          { type: 'pause', duration: 80 },
          { type: 'pointerUp', button: 0 },
        ]),
      ],
      ['POST', '/session/{session}/wda/touchAndHold', { x: 10, y: 20, duration: 0.8 }],
      [
        'POST',
        '/session/{session}/actions',
        pointer([
          { type: 'pointerMove', duration: 0, x: 200, y: 2000 / 3 },
          { type: 'pointerDown', button: 0 },
          { type: 'pointerMove', duration: 250, x: 200, y: 100 },
          { type: 'pointerUp', button: 0 },
        ]),
      ],
      ['POST', '/session/{session}/wda/keys', { value: [...'café ☕'] }],
      ['POST', '/session/{session}/wda/pressButton', { name: 'home' }],
      ['POST', '/session/{session}/wda/pressButton', { name: 'volumeup' }],
      ['POST', '/session/{session}/wda/pressButton', { name: 'volumedown' }],
      ['POST', '/wda/lock', {}],
      ['POST', '/wda/unlock', {}],
      ['POST', '/session/{session}/wda/keys', { value: ['\n'] }],
      ['POST', '/session/{session}/orientation', { orientation: 'LANDSCAPE' }],
      [
        'POST',
        '/session/{session}/actions',
        pointer([
          { type: 'pointerMove', duration: 0, x: 800, y: 100 / 3 },
          { type: 'pointerDown', button: 0 },
          { type: 'pause', duration: 80 },
          { type: 'pointerUp', button: 0 },
        ]),
      ],
      ['POST', '/session/{session}/url', { url: 'https://example.com/?q=a b' }],
      // The session's end: upright again, its WDA session gone.
      ['POST', '/session/{session}/orientation', { orientation: 'PORTRAIT' }],
      ['DELETE', '/session/{session}', {}],
    ]);
    // The power key asked whether the screen was locked before locking or waking it.
    expect(w.fake.wdaRequests().filter((request) => request.path === '/wda/locked').length).toBeGreaterThanOrEqual(2);

    // The app: re-signed with the service's profile, installed by go-ios.
    expect(seen.installed).toEqual({ appId: APP_ID });
    expect(called(w.fake, 'sign').length).toBe(1);
    expect(called(w.fake, 'install').length).toBe(1);
    expect(w.fake.device(PHONE_1).apps[APP_ID]?.signedBy).toMatch(/signed by fake go-ios/);

    expect(seen.frames.every((frame) => frame.subarray(1, 4).toString() === 'PNG')).toBe(true);
    expect(seen.frames[1]!.equals(seen.frames[0]!)).toBe(false);
    expect(
      Buffer.from(seen.shot as string, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(seen.log.length).toBe(3);
    expect(seen.log[0]).toMatch(/SpringBoard\(FrontBoard\)/);
    expect(seen.refused).toEqual([
      'The point (100, 1170) is off the 2532x1170 screen of Apple iPhone 15',
      expect.stringMatching(/iPhones have no back key/),
      expect.stringMatching(/iPhones have no menu key/),
    ]);
    // Safari came to the front for the URL; the phone ends upright, unlocked, its volume as pressed.
    const phone = w.fake.device(PHONE_1);
    expect(phone.foreground).toBe('com.apple.mobilesafari');
    expect(phone.orientation).toBe('PORTRAIT');
    expect(phone.locked).toBe(false);
    expect(phone.volume).toBe(8);
    // WDA and the forward stopped with the session.
    expect(phone.wdaPort).toBeNull();
  });

  it('a phone left locked is woken at the end; a session whose WDA cannot start is an infrastructure error', async () => {
    const w = world();
    await w.driver.listDevices();
    const { context } = recorder();
    const locked = await w.driver.execute(job({ kind: 'interactive', app: null, tests: null }), {
      ...context,
      interactive: {
        async serve(device) {
          await device.input({ action: 'key', key: 'power' });
          return { reason: 'idle', inputs: 1, frames: 0, log: 'interactive.log' };
        },
      },
    });
    expect(locked.outcome).toBe('COMPLETED');
    expect(w.fake.device(PHONE_1).locked).toBe(false);

    w.fake.updateDevice(PHONE_1, (device) => {
      delete device.apps['com.facebook.WebDriverAgentRunner.xctrunner'];
    });
    let served = false;
    const broken = await w.driver.execute(job({ kind: 'interactive', app: null, tests: null }), {
      ...context,
      interactive: {
        async serve() {
          served = true;
          return { reason: 'released', inputs: 0, frames: 0, log: 'interactive.log' };
        },
      },
    });
    expect(served).toBe(false);
    expect(broken.outcome).toBe('INFRA_ERROR');
    expect(broken.failReason).toMatch(/WebDriverAgentRunner\.xctrunner not installed/);
  });
});
