/**
 * Interactive sessions on a phone of the fake ADB server (docs/api.md#interactive-sessions): each
 * input reaches the phone as the right `input` (or `am`, `settings`, `pm`) call, points off the
 * screen and text adb cannot type are refused before anything is sent, frames are screenshots,
 * and the rotation is put back at the end.
 */
import { describe, expect, it } from 'vitest';
import { InputRefused, type InteractiveDevice, type InteractiveEnd } from '../../src/agent/driver.ts';
import { adbBench, app, PIXEL, adbFiles } from './adb-world.ts';
import { recorder } from './conformance.ts';

adbFiles();

describe('adb driver: interactive sessions', () => {
  const { bench, job } = adbBench();

  it('sends taps, swipes, text, keys, rotation, URLs and installs as the right shell commands', async () => {
    const pixel = bench.fake.device(PIXEL);
    const { context, steps } = recorder();
    const seen: { frame?: Buffer; refused: string[]; shot?: unknown } = { refused: [] };
    const result = await bench.driver.execute(job({ kind: 'interactive', app: null, tests: null }), {
      ...context,
      interactive: {
        async serve(device: InteractiveDevice): Promise<InteractiveEnd> {
          expect(device.frameIntervalMs).toBeGreaterThanOrEqual(100);
          seen.frame = await device.frame();
          const before = pixel.commands.length;
          await device.input({ action: 'tap', x: 540, y: 1200 });
          await device.input({ action: 'longPress', x: 10, y: 20, durationMs: 800 });
          await device.input({ action: 'swipe', x: 500, y: 2000, toX: 500, toY: 400, durationMs: 300 });
          await device.input({ action: 'text', text: "it's me; $HOME" });
          for (const key of ['home', 'back', 'power', 'volumeUp', 'volumeDown', 'enter', 'menu'] as const)
            await device.input({ action: 'key', key });
          await device.input({ action: 'rotate', orientation: 'landscape' });
          await device.input({ action: 'openUrl', url: 'https://example.com/?q=a b' });
          await device.input({ action: 'install', app });
          seen.shot = await device.input({ action: 'screenshot' });
          for (const input of [
            { action: 'tap', x: 1080, y: 5 },
            { action: 'swipe', x: 1, y: 1, toX: 1, toY: 2400, durationMs: 10 },
            { action: 'text', text: 'café' },
          ] as const)
            await device.input(input).catch((error: Error) => {
              expect(error).toBeInstanceOf(InputRefused);
              seen.refused.push(error.message);
            });
          const sent = pixel.commands.slice(before).filter((command) => !command.includes('/data/local/tmp'));
          expect(sent.filter((command) => !command.startsWith("'pm'") && !command.includes('screencap'))).toEqual([
            "'input' 'tap' '540' '1200'",
            "'input' 'swipe' '10' '20' '10' '20' '800'",
            "'input' 'swipe' '500' '2000' '500' '400' '300'",
            "'input' 'text' 'it'\"'\"'s%sme;%s$HOME'",
            "'input' 'keyevent' 'KEYCODE_HOME'",
            "'input' 'keyevent' 'KEYCODE_BACK'",
            "'input' 'keyevent' 'KEYCODE_POWER'",
            "'input' 'keyevent' 'KEYCODE_VOLUME_UP'",
            "'input' 'keyevent' 'KEYCODE_VOLUME_DOWN'",
            "'input' 'keyevent' 'KEYCODE_ENTER'",
            "'input' 'keyevent' 'KEYCODE_MENU'",
            "'settings' 'put' 'system' 'accelerometer_rotation' '0'",
            "'settings' 'put' 'system' 'user_rotation' '1'",
            "'am' 'start' '-a' 'android.intent.action.VIEW' '-d' 'https://example.com/?q=a b'",
          ]);
          expect(pixel.commands.slice(before).some((command) => command.startsWith("'pm' 'install'"))).toBe(true);
          return { reason: 'released', inputs: 17, frames: 1, log: 'interactive.log' };
        },
      },
    });
    expect(steps).toEqual(['PREPARING', 'RUNNING']);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.testCases!.map((testCase) => testCase.result)).toEqual(['PASSED']);
    expect(seen.frame!.subarray(1, 4).toString()).toBe('PNG');
    expect(
      Buffer.from(seen.shot as string, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(seen.refused).toEqual([
      'The point (1080, 5) is off the 1080x2400 screen of Google Pixel 7',
      'The point (1, 2400) is off the 1080x2400 screen of Google Pixel 7',
      expect.stringMatching(/printable ASCII only/),
    ]);
    // The rotation the user chose does not outlive the session.
    expect(pixel.settings.get('system/user_rotation')).toBe('0');
    expect(pixel.settings.get('system/accelerometer_rotation')).toBe('1');
  });
});
