/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core against real
 * `devicecloud serve` and `devicecloud agent` processes. Skipped, visibly, where no Chromium is
 * installed, unless DEVICECLOUD_REQUIRE_BROWSER=1 (CI, whose .ci/run installs it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/api-client.ts';
import { Cloud, type CloudUser } from '../support/cloud.ts';

const CHROMIUM = process.env.DEVICECLOUD_CHROMIUM ?? '/usr/bin/chromium';
const available = fs.existsSync(CHROMIUM);
if (!available) {
  if (process.env.DEVICECLOUD_REQUIRE_BROWSER === '1') throw new Error(`Chromium is required (DEVICECLOUD_REQUIRE_BROWSER=1) but ${CHROMIUM} is missing`);
  console.warn(`\n*** ${CHROMIUM} is not installed: the dashboard browser tests are SKIPPED (apt-get install chromium) ***\n`);
}
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');

describe.runIf(available)('the dashboard in Chromium', () => {
  const cloud = new Cloud();
  let browser: Browser;
  let page: Page;
  let user: CloudUser;
  const problems: string[] = [];

  beforeAll(async () => {
    await cloud.startServer();
    await cloud.startAgent('web-host', 3);
    user = await cloud.user('web@example.com', 'GOLD');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('console', (message) => {
      // A 401 from GET /auth/session before signing in is how the page learns it must ask.
      if (message.type() === 'error' && !/401/.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await cloud.stop();
  }, 60_000);

  it('signs in, reveals and regenerates the API key (the old one is refused at once), and signs out', async () => {
    await page.goto(cloud.url);
    await page.getByLabel('E-mail').fill('web@example.com');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong e-mail or password');
    await page.getByLabel('Password').fill('e2e-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'API key' }).waitFor();
    expect(await page.getByLabel('API key').textContent()).not.toContain(user.apiKey);
    await page.getByRole('button', { name: 'Reveal' }).click();
    expect(await page.getByLabel('API key').textContent()).toBe(user.apiKey);

    let warning = '';
    page.once('dialog', (dialog) => {
      warning = dialog.message();
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByText('A new key was issued').waitFor();
    expect(warning).toMatch(/old key will stop working/);
    const newKey = (await page.getByLabel('API key').textContent())!;
    expect(newKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(newKey).not.toBe(user.apiKey);
    expect((await user.api('GET', '/me')).status).toBe(401);
    expect((await createClient({ url: cloud.url, apiKey: newKey }).me()).email).toBe('web@example.com');
    user = { ...user, apiKey: newKey };

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(); // the session is gone, not only the page
  }, 60_000);

  it('shows a run live until it finishes, device by device', async () => {
    const client = createClient({ url: cloud.url, apiKey: user.apiKey });
    const files = [
      { id: (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id, action: 'INSTALL' as const },
      { id: (await client.upload(path.join(EXAMPLES, 'tests-green.zip'))).id, action: 'RUN_TEST' as const },
    ];
    const devices = (await client.devices()).filter((device) => device.osType === 'ANDROID');
    const run = await client.startRun({ osType: 'ANDROID', frameworkId: 4, projectName: 'Web shop', deviceIds: devices.map((device) => device.id), files });

    await page.getByLabel('E-mail').fill('web@example.com');
    await page.getByLabel('Password').fill('e2e-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Web shop' }).click();
    await page.getByRole('link', { name: run.displayName }).click();
    await page.getByRole('heading', { name: `${run.displayName} FINISHED` }).waitFor({ timeout: 60_000 });
    const rows = page.getByRole('table', { name: 'Device sessions' }).locator('tbody tr');
    expect(await rows.count()).toBe(devices.length);
    for (const text of await rows.allTextContents()) expect(text).toContain('SUCCEEDED');
    expect(problems, problems.join('\n')).toEqual([]);
  }, 90_000);
});
