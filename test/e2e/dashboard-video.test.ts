/**
 * The video of a device session in a real browser (docs/api.md#videos): a run on a virtual device
 * of a real `devicecloud agent` records one, the session's page plays it in Debian's Chromium
 * (`video.duration > 0`), and choosing a step or a failed test case on its timeline seeks the video
 * there. Skipped, visibly, where no Chromium is installed, unless DEVICECLOUD_REQUIRE_BROWSER=1.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/api-client.ts';
import { cliBudget } from '../support/cli.ts';
import { chromiumCloud, chromiumFor, signIn } from '../support/browser.ts';
import { type CloudUser, until } from '../support/cloud.ts';

const available = chromiumFor('video');
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');
const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-output/screenshots');
// Run in the browser; typed by hand, as the project's TypeScript has no DOM types.
type VideoElement = { duration: number; currentTime: number; readyState: number; seeking: boolean };

describe.runIf(available)('the video of a device session in Chromium', () => {
  const { cloud, browser } = chromiumCloud('video-host', 1);
  let user: CloudUser;

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    user = await cloud.user('video@example.com', 'GOLD');
  }, cliBudget(4));

  it('plays the recorded video, and its timeline seeks to a step and to the failed test', async () => {
    const client = createClient({ url: cloud.url, apiKey: user.apiKey });
    const files = [
      { id: (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id, action: 'INSTALL' as const },
      { id: (await client.upload(path.join(EXAMPLES, 'tests-failing.zip'))).id, action: 'RUN_TEST' as const },
    ];
    const [device] = await client.devices();
    const run = await client.startRun({
      osType: 'ANDROID',
      frameworkId: 4,
      projectName: 'Videos',
      deviceIds: [device!.id],
      files,
    });
    const [session] = (
      await until(
        () => user.api('GET', `/v2/runs/${run.id}/device-sessions`),
        (answer) => answer.body.data[0]?.state === 'FAILED',
        90_000,
      )
    ).body.data;
    expect(session.video).toMatch(/\/output-file-set\/files\/\d+\/file$/);

    const page = await (await browser().newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    await signIn(page, cloud.url, 'video@example.com');
    await page.goto(`${cloud.url}/#/projects/${run.projectId}/runs/${run.id}/device-sessions/${session.id}`);

    const video = page.getByLabel('Video of the session');
    await video.waitFor();
    await expect
      .poll(() => video.evaluate((element: VideoElement) => element.readyState), { timeout: 20_000 })
      .toBeGreaterThanOrEqual(1);
    const duration = await video.evaluate((element: VideoElement) => element.duration);
    expect(duration).toBeGreaterThan(1);
    // As long as the session ran on the device, not longer.
    expect(duration).toBeLessThan(session.duration / 1000 + 1);

    const timeline = page.getByRole('list', { name: 'Video timeline' });
    const running = timeline.getByRole('button', { name: /RUNNING/ });
    const failed = timeline.getByRole('button', { name: /testPayWithExpiredCard failed/ });
    for (const mark of [failed, running]) {
      const at = Number(await mark.getAttribute('data-at'));
      expect(at).toBeGreaterThan(0);
      expect(at).toBeLessThan(duration);
      await mark.click();
      await expect
        .poll(() => video.evaluate((element: VideoElement) => (element.seeking ? -1 : element.currentTime)), {
          timeout: 10_000,
        })
        .toBeCloseTo(at, 1);
    }
    // The failed test comes after the start of the tests.
    expect(Number(await failed.getAttribute('data-at'))).toBeGreaterThan(Number(await running.getAttribute('data-at')));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'device-session-video.png'), fullPage: true });
    expect(problems).toEqual([]);
  }, 150_000);
});
