/**
 * The devices page's live thumbnails in Chromium (docs/api.md#device-screens): a real `devicecloud
 * serve` and agent with two virtual devices. The user holding an interactive session sees its
 * device's newest frame in its tile, and a new one after the screen changed, without reloading;
 * another tenant sees that device busy, with no picture. A hidden tab stops asking (the page's
 * clock is Playwright's, so "no request while hidden" is counted over polls, not waited for).
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/api-client.ts';
import { cliBudget } from '../support/cli.ts';
import { chromiumCloud, chromiumFor, signIn } from '../support/browser.ts';
import { type CloudUser, until } from '../support/cloud.ts';

const available = chromiumFor('live device tiles');
const SCREENS = /\/api\/me\/device-screens/;

/** Run in the browser (the project's TypeScript has no DOM types): the tile's picture, if loaded. */
const pictureOf = (page: Page, deviceId: number) =>
  page.evaluate(`(() => {
    const image = document.querySelector('li[data-device-id="${deviceId}"] img');
    return image === null ? null : { src: image.src, loaded: image.complete && image.naturalWidth > 0 };
  })()`) as Promise<{ src: string; loaded: boolean } | null>;
const setHidden = (page: Page, hidden: boolean) =>
  page.evaluate(`(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${hidden} });
    document.dispatchEvent(new Event('visibilitychange'));
  })()`);

describe.runIf(available)('live device tiles in Chromium', () => {
  const { cloud, browser } = chromiumCloud('tiles-host', 2);
  let alice: CloudUser;
  const problems: string[] = [];

  beforeAll(async () => {
    alice = await cloud.user('tiles-alice@example.com', 'GOLD');
    await cloud.user('tiles-mallory@example.com', 'GOLD');
  }, cliBudget(4));

  async function devicesPage(email: string): Promise<Page> {
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
    // Time flows as usual until the test pauses it (the hidden tab's part).
    await context.clock.install();
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    await signIn(page, `${cloud.url}/#/`, email);
    await page.getByRole('link', { name: 'Devices' }).click();
    await page.getByRole('list', { name: 'Device thumbnails' }).waitFor();
    return page;
  }

  const call = async (user: CloudUser, path: string, body: unknown) => {
    const response = await fetch(`${cloud.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${user.apiKey}:`).toString('base64')}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(body),
    });
    expect(response.status, await response.clone().text()).toBeLessThan(300);
    return (await response.json()) as { id: number };
  };

  it("shows the holder its session's screen in the tile, live; another tenant a busy tile with no picture", async () => {
    const client = createClient({ url: cloud.url, apiKey: alice.apiKey });
    const [device, other] = (await client.devices()).filter((candidate) => candidate.osType === 'ANDROID');
    const session = await call(alice, '/api/me/device-sessions', { deviceId: device!.id });

    const page = await devicesPage('tiles-alice@example.com');
    await page.evaluate('window.stillTheSamePage = true');
    const first = await until(
      () => pictureOf(page, device!.id),
      (picture) => picture?.loaded === true,
      60_000,
    );
    expect(first!.src).toContain(`/device-sessions/${session.id}/frame?seq=`);
    // The idle device's tile has no picture.
    expect(await pictureOf(page, other!.id)).toBeNull();
    await page.getByRole('link', { name: `The session on ${device!.displayName}` }).waitFor();

    // The screen changes on the device: the tile shows the new frame, the page is not reloaded.
    await call(alice, `/api/me/device-sessions/${session.id}/input`, {
      action: 'openUrl',
      url: 'https://example.com/tiles',
    });
    const next = await until(
      () => pictureOf(page, device!.id),
      (picture) => picture !== null && picture.src !== first!.src && picture.loaded,
      60_000,
    );
    expect(next!.src).toContain(`/device-sessions/${session.id}/frame?seq=`);
    expect(await page.evaluate('window.stillTheSamePage')).toBe(true);

    // Another tenant: the device is busy, with no picture and no link to the session.
    const theirs = await devicesPage('tiles-mallory@example.com');
    const tile = theirs.locator(`li[data-device-id="${device!.id}"]`);
    await expect.poll(() => tile.textContent(), { timeout: 30_000 }).toContain('TESTING');
    expect(await pictureOf(theirs, device!.id)).toBeNull();
    expect(await tile.getByRole('link').count()).toBe(0);

    // A hidden tab asks nothing however many polls go by; shown again, it asks at once.
    const asked: string[] = [];
    page.on('request', (request) => {
      if (SCREENS.test(request.url())) asked.push(request.url());
    });
    await setHidden(page, true);
    await page.clock.pauseAt(Date.now() + 1000);
    await page.clock.runFor(30_000);
    expect(asked).toEqual([]);
    await setHidden(page, false);
    const again = page.waitForRequest(SCREENS);
    await page.clock.runFor(5_000);
    await again;
    await page.clock.resume();

    await call(alice, `/api/me/device-sessions/${session.id}/release`, {});
    expect(problems).toEqual([]);
  }, 240_000);
});
