/**
 * An interactive session in a real browser (docs/api.md#interactive-sessions): in Debian's
 * Chromium, a user reserves a virtual device of a real `devicecloud agent` from the devices page,
 * sees its frames arrive, installs the sample app, taps on the screen and sees it change, types
 * and presses keys, then releases it; the device ends cleaned and free. Skipped, visibly, where no
 * Chromium is installed, unless DEVICECLOUD_REQUIRE_BROWSER=1.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCREEN_SIZES, hitTest } from '../../src/agent/drivers/virtual/screen/render.ts';
import { homeScreen } from '../../src/agent/drivers/virtual/screen/ui-model.ts';
import { createClient } from '../../src/client/api-client.ts';
import { cliBudget } from '../support/cli.ts';
import { chromiumCloud, chromiumFor, signIn } from '../support/browser.ts';
import { type CloudUser, until } from '../support/cloud.ts';

const available = chromiumFor('live device');
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');

/**
 * What the <img> of the live screen shows now, drawn on a canvas: changes when a new frame came.
 * Run in the browser: a string, as the project's TypeScript has no DOM types.
 */
const SHOWN = `(() => {
  const image = document.querySelector('img.live-screen');
  if (image === null || image.naturalWidth === 0) return '';
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  canvas.getContext('2d').drawImage(image, 0, 0);
  return canvas.toDataURL('image/png');
})()`;
const shown = (page: Page) => page.evaluate(SHOWN) as Promise<string>;

describe.runIf(available)('an interactive session in Chromium', () => {
  const { cloud, browser } = chromiumCloud('live-host', 1);
  let user: CloudUser;
  const problems: string[] = [];

  beforeAll(async () => {
    user = await cloud.user('live@example.com', 'GOLD');
  }, cliBudget(4));

  it('reserves a device, shows its frames, taps, types, installs, releases; the device ends cleaned and free', async () => {
    const client = createClient({ url: cloud.url, apiKey: user.apiKey });
    const app = await client.upload(path.join(EXAMPLES, 'sample-app.apk'));
    const [device] = (await client.devices()).filter((candidate) => candidate.osType === 'ANDROID');

    const page = await (await browser().newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    await signIn(page, `${cloud.url}/#/`, 'live@example.com');

    await page.goto(`${cloud.url}/#/devices`);
    await page.getByRole('link', { name: `Use ${device!.displayName} live` }).click();
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.getByRole('heading', { name: 'Live device' }).waitFor();

    // Frames arrive: the home screen.
    const screen = page.locator('img.live-screen');
    await screen.waitFor({ state: 'visible', timeout: 60_000 });
    const home = await until(
      () => shown(page),
      (image) => image !== '',
      60_000,
    );

    // Installing the sample app puts it on the home screen (and says so).
    await page.getByLabel('App', { exact: true }).selectOption(String(app.id));
    await page.getByRole('button', { name: 'Install' }).click();
    const installed = await until(
      () => shown(page),
      (image) => image !== home,
      60_000,
    );

    // A tap on the app's row opens it: the screen changes again.
    const apps = ['com.android.chrome', 'com.android.settings', 'com.devicecloud.sample', 'com.google.android.gms'];
    const screenModel = homeScreen('ANDROID', device!.displayName, apps);
    const row = apps.indexOf('com.devicecloud.sample');
    const y = Array.from({ length: 640 }, (_, index) => index).find((at) => {
      const hit = hitTest(screenModel, SCREEN_SIZES.ANDROID, 100, at);
      return hit?.kind === 'element' && hit.row === row;
    })!;
    const box = (await screen.boundingBox())!;
    await screen.click({ position: { x: (100 * box.width) / 320, y: ((y + 12) * box.height) / 640 } });
    const opened = await until(
      () => shown(page),
      (image) => image !== installed,
      60_000,
    );

    // Typed text lands in the screen's field; Back goes home again.
    await page.getByLabel('Text', { exact: true }).fill('hello');
    await page.getByRole('button', { name: 'Type', exact: true }).click();
    const typed = await until(
      () => shown(page),
      (image) => image !== opened,
      60_000,
    );
    expect(typed).not.toBe(opened);
    await page.getByRole('button', { name: 'Back' }).click();
    await until(
      () => shown(page),
      (image) => image !== typed,
      60_000,
    );
    // The device's log pane follows: the text typed is counted, never shown.
    const deviceLog = await until(
      async () => (await page.getByLabel('Device log').textContent()) ?? '',
      (text) => text.includes('I/Input: key back'),
      60_000,
    );
    expect(deviceLog).toContain('I/Input: text (5 characters)');
    expect(deviceLog).not.toContain('hello');
    await expect(page.getByRole('list', { name: 'What you did' }).getByRole('listitem').count()).resolves.toBe(4);

    await page.getByRole('button', { name: 'Release' }).click();
    await page.getByText('· ended').waitFor({ timeout: 60_000 });
    const sessions = await until(
      async () =>
        (await (
          await fetch(`${cloud.url}/api/me/device-sessions?limit=1&sort=id_d`, {
            headers: {
              accept: 'application/json',
              authorization: `Basic ${Buffer.from(`${user.apiKey}:`).toString('base64')}`,
            },
          })
        ).json()) as { data: Array<{ state: string; type: string }> },
      (list) => list.data[0]?.state === 'SUCCEEDED',
      60_000,
    );
    expect(sessions.data[0]).toMatchObject({ state: 'SUCCEEDED', type: 'MANUAL' });
    await until(
      async () => (await client.devices()).find((candidate) => candidate.id === device!.id)!,
      (free) => free.lockReason === null || free.lockReason === undefined,
      60_000,
    );
    expect(problems).toEqual([]);
  }, 180_000);
});
