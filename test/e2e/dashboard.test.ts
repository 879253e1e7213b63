/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core against real
 * `devicecloud serve` and `devicecloud agent` processes. Skipped, visibly, where no Chromium is
 * installed, unless DEVICECLOUD_REQUIRE_BROWSER=1 (CI, whose .ci/run installs it).
 *
 * Screenshots of the main pages (desktop and phone) are saved under test-output/screenshots/ for
 * people to look at; every page is checked for console errors.
 */
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type Browser, type BrowserContext, type Locator, type Page, chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/api-client.ts';
import { CHROMIUM, chromiumFor } from '../support/browser.ts';
import { cliBudget } from '../support/cli.ts';
import { Cloud, type CloudUser, until } from '../support/cloud.ts';
import { zip } from '../support/zips.ts';

const available = chromiumFor('dashboard');
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');
const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-output/screenshots');
const PHONE = { width: 390, height: 844 };
// Runs in the browser; typed by hand, as the project's TypeScript has no DOM types.
const LOADED = (image: { complete: boolean; naturalWidth: number }) => image.complete && image.naturalWidth > 0;

describe.runIf(available)('the dashboard in Chromium', () => {
  const cloud = new Cloud();
  let browser: Browser;
  let user: CloudUser;
  let password = 'e2e-password';
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];
  /** The run started from the browser, whose device session the later tests open. */
  let browserRun: { projectId: number; id: number } | undefined;

  /** A fresh browser profile (no cookies) whose console errors and page errors are collected. */
  async function openPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
    const context = await browser.newContext({
      viewport,
      isMobile: viewport.width < 600,
      hasTouch: viewport.width < 600,
    });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (message) => {
      // Only a wrong-password attempt may answer 401 (and a browser logs every 4xx it fetches).
      const wrongPassword = /status of 401/.test(message.text()) && message.location().url.endsWith('/auth/session');
      if (message.type() === 'error' && !wrongPassword)
        problems.push(`${page.url()}: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
    return page;
  }

  async function signIn(page: Page, email: string, secret: string): Promise<void> {
    await page.goto(`${cloud.url}/#/`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }

  /** Nothing sticks out sideways: the page reads on a phone without scrolling left and right. */
  async function fitsTheScreen(page: Page): Promise<void> {
    const overflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow, `${page.url()} is ${overflow}px wider than the screen`).toBeLessThanOrEqual(0);
  }

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await cloud.startServer();
    await cloud.startAgent('web-host', 3);
    user = await cloud.user('web@example.com', 'GOLD');
    await cloud.admin([
      'create-user',
      '--email',
      'ops@example.com',
      '--password',
      'ops-password',
      '--plan',
      'PLATINUM',
      '--role',
      'ADMIN',
    ]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, cliBudget(5)); // serve, an agent token and the agent, two users

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    const seen = problems.splice(0);
    expect(seen, seen.join('\n')).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await cloud.stop();
  }, 60_000);

  it('signs in, reveals and regenerates the API key (the old one is refused at once), and signs out', async () => {
    const page = await openPage();
    await page.goto(cloud.url);
    await page.getByLabel('E-mail').fill('web@example.com');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong e-mail or password');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'API key' }).waitFor();
    await expect.poll(() => page.getByText('web@example.com', { exact: true }).count()).toBeGreaterThan(0);
    // Storage used of the plan's quota (GOLD: 50 GiB), from /api/me.
    expect(await page.getByLabel('Storage used').getAttribute('max')).toBe(String(50 * 1024 ** 3));
    expect(await page.locator('[data-key="storage"]').textContent()).toMatch(/^ ?\d+(\.\d)? ?[KMG]?B of 50 GB used$/);
    expect(await page.getByLabel('API key').textContent()).not.toContain(user.apiKey);
    expect(await page.content()).not.toContain(user.apiKey);
    // The key is not in the page until revealed: it is fetched then (the sign-in is recent).
    await page.getByRole('button', { name: 'Reveal' }).click();
    await expect.poll(() => page.getByLabel('API key').textContent()).toBe(user.apiKey);
    await screenshot(page, 'account');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cloud.url });
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(user.apiKey);

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
    user = { ...user, apiKey: newKey, api: keyed(newKey) };

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(); // the session is gone, not only the page
  }, 60_000);

  it('asks for the password again before revealing the key when the sign-in is no longer recent', async () => {
    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'API key' }).waitFor();
    expect(await page.getByLabel('Confirm with your password').isHidden()).toBe(true); // not asked for until needed
    // As if the password had been entered long ago (the server's clock cannot be moved here).
    const db = new BetterSqlite3(path.join(cloud.dataDir, 'devicecloud.db'));
    try {
      db.prepare('UPDATE web_sessions SET auth_time = 0').run();
    } finally {
      db.close();
    }
    await page.getByRole('button', { name: 'Reveal' }).click();
    await page.getByLabel('Confirm with your password').fill(password);
    expect(await page.getByLabel('API key').textContent()).not.toContain(user.apiKey);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await expect.poll(() => page.getByLabel('API key').textContent()).toBe(user.apiKey);
    expect(await page.getByLabel('Confirm with your password').isHidden()).toBe(true);
  }, 60_000);

  it('shows a run live until it finishes, device by device', async () => {
    const client = createClient({ url: cloud.url, apiKey: user.apiKey });
    const files = [
      { id: (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id, action: 'INSTALL' as const },
      { id: (await client.upload(path.join(EXAMPLES, 'tests-green.zip'))).id, action: 'RUN_TEST' as const },
    ];
    const devices = (await client.devices()).filter((device) => device.osType === 'ANDROID');
    const run = await client.startRun({
      osType: 'ANDROID',
      frameworkId: 4,
      projectName: 'Web shop',
      deviceIds: devices.map((device) => device.id),
      files,
    });

    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.getByRole('link', { name: 'Web shop' }).click();
    await page.getByRole('link', { name: run.displayName }).click();
    await page.getByRole('heading', { name: `${run.displayName} FINISHED` }).waitFor({ timeout: 60_000 });
    const rows = page.getByRole('table', { name: 'Device sessions' }).locator('tbody tr');
    expect(await rows.count()).toBe(devices.length);
    for (const text of await rows.allTextContents()) expect(text).toContain('SUCCEEDED');
  }, 90_000);

  it('starts a run from the browser: project, framework, uploads and device group, then watches it finish', async () => {
    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Start a run' }).click();
    await page.getByRole('heading', { name: 'Start a run' }).waitFor();
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'New project…' });
    await page.getByLabel('New project name').fill('Browser shop');
    await page.getByLabel('Framework').selectOption({ label: 'Appium Android server side' });
    await expect.poll(() => page.locator('#run-framework-help').textContent()).toContain('run-tests.sh');
    // Only what the framework needs is asked for, and only groups of its OS are offered.
    await page.getByLabel('App (.apk)').setInputFiles(path.join(EXAMPLES, 'sample-app.apk'));
    await page.getByLabel('Test package (.zip)').setInputFiles(path.join(EXAMPLES, 'tests-green.zip'));
    const groups = await page.getByLabel('Device group').locator('option').allTextContents();
    expect(groups).toEqual(['All Android devices (2 devices)']);
    await page.getByLabel('Run name (optional)').fill('From the browser');
    await screenshot(page, 'start-run');
    await page.getByRole('button', { name: 'Start run' }).click();

    await page.getByRole('heading', { name: /^From the browser (WAITING|RUNNING|FINISHED)$/ }).waitFor();
    const match = /#\/projects\/(\d+)\/runs\/(\d+)$/.exec(page.url());
    expect(match, page.url()).not.toBeNull();
    browserRun = { projectId: Number(match![1]), id: Number(match![2]) };
    const run = (await user.api('GET', `/v2/runs/${browserRun.id}`)).body;
    expect(run).toMatchObject({
      projectName: 'Browser shop',
      frameworkId: 4,
      deviceCount: 2,
      config: { deviceGroupId: expect.any(Number) },
    });
    expect(run.config.files.map((file: { action: string }) => file.action)).toEqual(['INSTALL', 'RUN_TEST']);

    await page.getByRole('heading', { name: 'From the browser FINISHED' }).waitFor({ timeout: 60_000 });
    const rows = page.getByRole('table', { name: 'Device sessions' }).locator('tbody tr');
    expect(await rows.count()).toBe(2);
    for (const text of await rows.allTextContents()) expect(text).toContain('SUCCEEDED');
    await expect.poll(() => page.getByText('8 passed, 0 failed of 8').count()).toBe(1); // 4 tests on each of 2 devices
    await screenshot(page, 'run');
  }, 90_000);

  it('opens a device session: CPU and memory charts, steps, test cases, screenshots, log and downloads', async () => {
    expect(browserRun, 'the run started from the browser').toBeDefined();
    const sessions = (await user.api('GET', `/v2/runs/${browserRun!.id}/device-sessions`)).body.data;
    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.goto(`${cloud.url}/#/projects/${browserRun!.projectId}/runs/${browserRun!.id}`);
    await page.getByRole('link', { name: sessions[0].device.displayName }).click();
    await page.getByRole('heading', { name: `${sessions[0].device.displayName} SUCCEEDED` }).waitFor();

    for (const name of ['CPU usage', 'Memory usage']) {
      const chart = page.getByRole('img', { name });
      await chart.waitFor();
      const points = (await chart.locator('polyline.line').getAttribute('points'))!.trim().split(/\s+/);
      expect(points.length, `${name}: one point per sample`).toBeGreaterThan(0);
      for (const point of points) expect(point).toMatch(/^\d+(\.\d)?,\d+(\.\d)?$/);
      expect(await chart.locator('circle.dot').count()).toBe(points.length);
      expect(await chart.locator('desc').textContent()).toMatch(/^\d+ samples? over [\d.]+ s; peak .+, average .+\.$/);
      // Axis labels say what is measured.
      expect(await chart.locator('.axis-label').allTextContents()).toEqual([
        'Time since the first sample',
        name === 'CPU usage' ? 'CPU (%)' : 'Memory (MB)',
      ]);
    }
    const samples = (await user.api('GET', `/v2/device-sessions/${sessions[0].id}/performance`)).body;
    expect(await page.getByRole('img', { name: 'CPU usage' }).locator('circle.dot').count()).toBe(samples.length);

    const steps = await page.getByRole('list', { name: 'Steps' }).locator('li').allTextContents();
    expect(steps.map((step) => step.split(' ')[0])).toEqual(
      expect.arrayContaining(['WAITING', 'PREPARING', 'INSTALL', 'RUNNING']),
    );
    const cases = await page.getByRole('list', { name: 'Test cases' }).locator('li').allTextContents();
    expect(cases).toHaveLength(4);
    expect(cases.join('\n')).toContain('testPayWithValidCard');

    // Images and downloads are authenticated by the session cookie alone.
    const images = page.getByRole('list', { name: 'Screenshots' }).getByRole('img');
    expect(await images.count()).toBe(2);
    for (const image of await images.all()) {
      await expect.poll(() => image.evaluate(LOADED)).toBe(true);
    }
    expect(await page.getByLabel('Log', { exact: true }).textContent()).toContain('tests passed');
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'JUnit report' }).click();
    const junit = fs.readFileSync((await (await download).path())!, 'utf8');
    expect(junit).toContain('<testsuite');
    expect(junit).toContain('testPayWithValidCard');
    const outputLink = page.getByRole('list', { name: 'Downloads' }).getByRole('link', { name: '01-home.png' });
    const output = await page.request.get(new URL((await outputLink.getAttribute('href'))!, cloud.url).toString());
    expect(output.status()).toBe(200);
    expect(output.headers()['content-type']).toBe('image/png');
    await screenshot(page, 'device-session');

    // On a phone: the same page, readable without sideways scrolling.
    const phone = await openPage(PHONE);
    await signIn(phone, 'web@example.com', password);
    await phone.goto(page.url());
    await phone.getByRole('img', { name: 'CPU usage' }).waitFor();
    // Screenshots load lazily, as they come into view.
    for (const image of await phone.getByRole('list', { name: 'Screenshots' }).getByRole('img').all()) {
      await image.scrollIntoViewIfNeeded();
      await expect.poll(() => image.evaluate(LOADED)).toBe(true);
    }
    await fitsTheScreen(phone);
    await screenshot(phone, 'device-session-phone');
  }, 90_000);

  it('shows a failed test with its message and stack trace', async () => {
    const client = createClient({ url: cloud.url, apiKey: user.apiKey });
    const files = [
      { id: (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id, action: 'INSTALL' as const },
      { id: (await client.upload(path.join(EXAMPLES, 'tests-failing.zip'))).id, action: 'RUN_TEST' as const },
    ];
    const [device] = (await client.devices()).filter((candidate) => candidate.osType === 'ANDROID');
    const run = await client.startRun({
      osType: 'ANDROID',
      frameworkId: 4,
      projectName: 'Web shop',
      deviceIds: [device!.id],
      files,
    });
    const [session] = (
      await until(
        () => user.api('GET', `/v2/runs/${run.id}/device-sessions`),
        (answer) => answer.body.data[0]?.state === 'FAILED',
        60_000,
      )
    ).body.data;

    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.goto(`${cloud.url}/#/projects/${run.projectId}/runs/${run.id}/device-sessions/${session.id}`);
    await page.getByRole('heading', { name: `${device!.displayName} FAILED` }).waitFor();
    const failure = page.getByRole('list', { name: 'Test cases' }).locator('li').first();
    expect(await failure.textContent()).toContain('FAILED');
    const summary = failure.locator('summary');
    expect(await summary.textContent()).toBe('Expected the payment to be declined, but it was accepted');
    await summary.click();
    const trace = failure.getByLabel('Stack trace of testPayWithExpiredCard');
    await trace.waitFor();
    expect(await trace.textContent()).toContain('CheckoutTest.java:42');
    await screenshot(page, 'device-session-failed');

    // Retry from the run's page: a new device session replaces the failed one, followed live again.
    const [original] = (await user.api('GET', `/v2/runs/${run.id}/device-sessions`)).body.data;
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: run.displayName }).click();
    await page.getByRole('heading', { name: `${run.displayName} FINISHED` }).waitFor();
    await page.getByRole('button', { name: 'Retry failed devices' }).click();
    // The retry ended, marked as one, in place of the session it replaced: the page went live again and followed it.
    const rows = page.getByRole('table', { name: 'Device sessions' }).locator('tbody tr');
    const ended = (texts: string[]) =>
      texts.length === 1 && texts[0]!.includes('FAILED') && texts[0]!.includes('(retry)');
    await expect.poll(async () => ended(await rows.allTextContents()), { timeout: 60_000 }).toBe(true);
    await page.getByRole('heading', { name: `${run.displayName} FINISHED` }).waitFor();
    const sessions = (await user.api('GET', `/v2/runs/${run.id}/device-sessions`)).body.data;
    expect(sessions.map((one: { retryState: string; state: string }) => [one.retryState, one.state])).toEqual([
      ['MANUAL', 'FAILED'],
    ]);
    const replaced = (await user.api('GET', `/v2/device-sessions/${original.id}`)).body;
    expect([replaced.retryState, replaced.state]).toEqual(['NONE', 'FAILED']);
    await screenshot(page, 'run-retried');
  }, 90_000);

  it('shows where a waiting run stands in the queue and why it waits; aborting the run ahead lets it start', async () => {
    const client = createClient({ url: cloud.url, apiKey: user.apiKey });
    const slowPackage = path.join(cloud.dataDir, 'slow-tests.zip');
    fs.writeFileSync(slowPackage, await zip([['run-tests.sh', '#!/usr/bin/env bash\nsleep 120\n', 0o100755]]));
    const app = (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id;
    const slow = (await client.upload(slowPackage)).id;
    const green = (await client.upload(path.join(EXAMPLES, 'tests-green.zip'))).id;
    const [device] = (await client.devices()).filter((candidate) => candidate.osType === 'ANDROID');
    const start = (name: string, tests: number) =>
      client.startRun({
        osType: 'ANDROID',
        frameworkId: 4,
        projectName: 'Web shop',
        testRunName: name,
        deviceIds: [device!.id],
        files: [
          { id: app, action: 'INSTALL' },
          { id: tests, action: 'RUN_TEST' },
        ],
      });
    const ahead = await start('Slow run', slow);
    await until(
      () => user.api('GET', `/v2/runs/${ahead.id}`),
      (answer) => answer.body.state === 'RUNNING',
      30_000,
    );
    const queued = await start('Queued run', green);

    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.goto(`${cloud.url}/#/projects/${queued.projectId}/runs/${queued.id}`);
    await page.getByRole('heading', { name: 'Queued run WAITING' }).waitFor();
    expect(await page.locator('.waiting').textContent()).toBe(
      `Queue position 1. Waiting for 1 device (${device!.displayName}: busy with another run)`,
    );
    await screenshot(page, 'run-waiting');
    // The project's run list says it too, in a column that is there only while a run waits.
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Web shop' }).click();
    const queuedRow = page.getByRole('table', { name: 'Runs' }).locator('tr', { hasText: 'Queued run' });
    await expect
      .poll(() => queuedRow.textContent())
      .toContain(`#1 in line. Waiting for 1 device (${device!.displayName}: busy with another run)`);
    expect(await page.getByRole('columnheader', { name: 'Why it waits' }).count()).toBe(1);

    await page.goto(`${cloud.url}/#/projects/${ahead.projectId}/runs/${ahead.id}`);
    await page.getByRole('heading', { name: 'Slow run RUNNING' }).waitFor();
    let question = '';
    page.once('dialog', (dialog) => {
      question = dialog.message();
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Abort run' }).click();
    await page.getByRole('heading', { name: 'Slow run FINISHED' }).waitFor();
    expect(question).toContain('Abort Slow run?');
    expect(await page.getByRole('table', { name: 'Device sessions' }).locator('tbody tr').textContent()).toContain(
      'ABORTED',
    );

    await page.goto(`${cloud.url}/#/projects/${queued.projectId}/runs/${queued.id}`);
    await page.getByRole('heading', { name: 'Queued run FINISHED' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('.waiting').count()).toBe(0);
    await page.goto(`${cloud.url}/#/projects/${queued.projectId}`);
    await page.getByRole('table', { name: 'Runs' }).waitFor();
    expect(await page.getByRole('columnheader', { name: 'Why it waits' }).count()).toBe(0);
  }, 90_000);

  it('lists the devices with OS version, state and health; creates, fills, renames and deletes a group', async () => {
    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.getByRole('link', { name: 'Devices' }).click();
    const rows = page.getByRole('table', { name: 'Devices' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    for (const text of await rows.allTextContents()) {
      expect(text).toMatch(/(Android \d+ \(API \d+\)|iOS [\d.]+)/);
      expect(text).toMatch(/(IDLE|TESTING|CLEANING)Healthy/);
    }
    await screenshot(page, 'devices');

    await page.getByLabel('Group name').fill('Pixels');
    await page.getByLabel('OS', { exact: true }).selectOption('ANDROID');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('heading', { name: 'Pixels' }).waitFor();
    const boxes = page.getByRole('group', { name: /Devices in the group/ }).getByRole('checkbox');
    expect(await boxes.count()).toBe(2); // the Android devices only
    for (const box of await boxes.all()) {
      await box.check();
      await page.getByText(/^Added /).waitFor();
    }
    await expect.poll(() => page.getByRole('group', { name: 'Devices in the group (2)' }).count()).toBe(1);
    await page.getByLabel('Name', { exact: true }).fill('My pixels');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: 'My pixels' }).waitFor();
    const groups = (await user.api('GET', '/me/device-groups')).body.data;
    expect(
      groups.map((group: { displayName: string; deviceCount: number }) => [group.displayName, group.deviceCount]),
    ).toEqual([['My pixels', 2]]);
    await boxes.first().uncheck();
    await page.getByText(/^Removed /).waitFor();
    expect((await user.api('GET', '/me/device-groups')).body.data[0].deviceCount).toBe(1);
    await screenshot(page, 'group');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete group' }).click();
    await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor();
    await until(
      () => user.api('GET', '/me/device-groups'),
      (answer) => answer.body.total === 0,
      5000,
    );
    await expect
      .poll(() => page.getByRole('table', { name: 'Device groups' }).textContent())
      .not.toContain('My pixels');
  }, 60_000);

  it('lets an operator manage users and take a device out of service, which shows everywhere', async () => {
    const page = await openPage();
    await signIn(page, 'ops@example.com', 'ops-password');
    await page.getByRole('link', { name: 'Operators' }).click();
    await page.getByRole('heading', { name: 'Operators' }).waitFor();

    // Plans: a change shows in the user's own /api/me at once.
    await page.getByLabel('Plan of web@example.com').selectOption('PLATINUM');
    await page.getByText('web@example.com now has the plan PLATINUM.').waitFor();
    expect((await user.api('GET', '/me')).body.plan).toBe('PLATINUM');

    await page.getByLabel('E-mail').fill('new@example.com');
    await page.getByLabel('First password').fill('new-password-1');
    await page.getByLabel('Plan', { exact: true }).selectOption('GOLD');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByText(/^Created new@example.com \(GOLD\)/).waitFor();
    await page.getByRole('table', { name: 'Users' }).getByText('new@example.com').waitFor();

    // Devices: out of service, shown to the operator, in the public device list and to users.
    const device = (await user.api('GET', '/v2/devices?sort=displayName_a&filter=osType_eq_ANDROID')).body.data[0];
    const devices = page.getByRole('table', { name: 'Devices of web-host' });
    await devices.waitFor();
    await screenshot(page, 'operators');
    await devices.getByRole('button', { name: `Take out of service: ${device.displayName}` }).click();
    await devices.getByRole('button', { name: `Return to service: ${device.displayName}` }).waitFor();
    await page.getByText(`${device.displayName} is out of service`).waitFor();
    expect(await devices.locator('tr', { hasText: device.displayName }).textContent()).toContain('DISABLED');
    expect((await user.api('GET', `/v2/devices/${device.id}`)).body).toMatchObject({
      enabled: false,
      available: false,
    });

    const other = await openPage();
    await signIn(other, 'web@example.com', password);
    await other.goto(`${cloud.url}/#/devices`);
    const row = other.getByRole('table', { name: 'Devices' }).locator('tr', { hasText: device.displayName });
    await expect.poll(() => row.textContent()).toContain('DISABLEDTaken out of service by an operator');
    await screenshot(other, 'devices-with-one-disabled');

    await devices.getByRole('button', { name: `Return to service: ${device.displayName}` }).click();
    await devices.getByRole('button', { name: `Take out of service: ${device.displayName}` }).waitFor();
    expect((await user.api('GET', `/v2/devices/${device.id}`)).body.enabled).toBe(true);
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).not.toContain('DISABLED');
  }, 60_000);

  it('has a device whose cleaning failed cleaned again from the Operators page', async () => {
    // The virtual driver's test hook makes the iOS device's cleaning fail when the agent restarts.
    const device = (await user.api('GET', '/v2/devices?filter=osType_eq_IOS')).body.data[0];
    const hook = path.join(cloud.dataDir, 'web-host', 'agent', 'virtual', 'devices', 'virtual-ios-1', 'fail-cleaning');
    fs.writeFileSync(hook, '');
    await cloud.killAgent('web-host');
    await cloud.startAgent('web-host', 3);
    await expect
      .poll(async () => (await user.api('GET', `/v2/devices/${device.id}`)).body.lockReason, { timeout: 20_000 })
      .toBe('NOT_OPERATIONAL');
    fs.rmSync(hook);

    // Users see it too, with its reason, in their device list (which stays live).
    const mine = await openPage();
    await signIn(mine, 'web@example.com', password);
    await mine.goto(`${cloud.url}/#/devices`);
    const row = mine.getByRole('table', { name: 'Devices' }).locator('tr', { hasText: device.displayName });
    await expect.poll(() => row.textContent()).toMatch(/NOT OPERATIONAL.+/);
    await screenshot(mine, 'devices-not-operational');

    const page = await openPage();
    await signIn(page, 'ops@example.com', 'ops-password');
    await page.getByRole('link', { name: 'Operators' }).click();
    const devices = page.getByRole('table', { name: 'Devices of web-host' });
    await devices
      .getByRole('button', { name: `Clean again and return to service: ${device.displayName} (virtual-ios-1)` })
      .click();
    await page.getByText(`${device.displayName} is being cleaned again`).waitFor();
    // The agent hears it at its next heartbeat, cleans the device, and it takes work again.
    await expect
      .poll(async () => (await user.api('GET', `/v2/devices/${device.id}`)).body.locked, { timeout: 30_000 })
      .toBe(false);
    await expect
      .poll(() => devices.locator('tr', { hasText: device.displayName }).textContent(), { timeout: 15_000 })
      .toContain('IDLE');
    expect(await devices.getByRole('button', { name: /^Clean again/ }).count()).toBe(0);
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toMatch(/IDLEHealthy/);
  }, 90_000);

  it('shows a normal user no operator pages, and the API is not even asked', async () => {
    const page = await openPage();
    const adminCalls: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/admin')) adminCalls.push(request.url());
    });
    await signIn(page, 'web@example.com', password);
    expect(await page.getByRole('link', { name: 'Operators' }).count()).toBe(0);
    await page.goto(`${cloud.url}/#/admin`);
    await page.getByText('This page is for operators').waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    expect(adminCalls).toEqual([]);
    expect((await user.api('GET', '/admin/users')).status).toBe(403);
  }, 30_000);

  it('is usable with the keyboard alone, with a visible focus', async () => {
    const page = await openPage();
    await page.goto(`${cloud.url}/#/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.keyboard.type('web@example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();

    // The new page's heading has the focus; going back from it walks the navigation.
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Projects');
    const focused = () => page.evaluate<string>('document.activeElement?.textContent?.trim()');
    for (let i = 0; i < 6 && (await focused()) !== 'Devices'; i++) await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Devices');
    const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).not.toBe('none');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor();
    expect(await page.evaluate<string>('document.activeElement?.tagName')).toBe('H1');

    // Before the navigation, a link skips it.
    for (let i = 0; i < 10 && (await focused()) !== 'Skip to the page'; i++) await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Skip to the page');
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>('document.activeElement?.id')).toBe('main');
    expect(page.url()).toMatch(/#\/devices$/); // skipping is not navigating
  }, 30_000);

  it('changes the password, signing out the other sessions only; the old one is refused and the new one signs in', async () => {
    const other = await openPage();
    await signIn(other, 'web@example.com', password);
    const page = await openPage();
    await signIn(page, 'web@example.com', password);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Current password').fill(password);
    await page.getByLabel('New password', { exact: true }).fill('a-brand-new-password');
    await page.getByLabel('Repeat the new password').fill('a-brand-new-password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password was changed').waitFor();
    // This session goes on (its key can be revealed: the password was just entered); the other one ended.
    await page.getByRole('button', { name: 'Reveal' }).click();
    await expect.poll(() => page.getByLabel('API key').textContent()).toBe(user.apiKey);
    await other.reload();
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('E-mail').fill('web@example.com');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong e-mail or password');
    password = 'a-brand-new-password';
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    await screenshot(page, 'projects');
  }, 60_000);

  it('reads on a phone: no page is wider than a 390 px screen, and the key tables fit without scrolling', async () => {
    expect(browserRun, 'the run started from the browser').toBeDefined();
    const phone = await openPage(PHONE);
    await phone.goto(`${cloud.url}/#/`);
    await phone.getByRole('heading', { name: 'Sign in' }).waitFor();
    await fitsTheScreen(phone);
    await screenshot(phone, 'sign-in-phone');
    await signIn(phone, 'web@example.com', password);

    const groups: Array<{ id: number; displayName: string }> = (
      await user.api('GET', '/me/device-groups?withPublic=true')
    ).body.data;
    const group = groups.find((candidate) => candidate.displayName === 'All Android devices')!;
    const runUrl = `#/projects/${browserRun!.projectId}/runs/${browserRun!.id}`;
    // Each page, what shows it has loaded, and the tables a phone user needs whole (wider
    // ones, the operators', may scroll sideways inside their box).
    const pages: Array<[string, string, () => Locator, string[]]> = [
      ['projects', '#/', () => phone.getByRole('table', { name: 'Projects' }), ['Projects']],
      ['project', `#/projects/${browserRun!.projectId}`, () => phone.getByRole('table', { name: 'Runs' }), ['Runs']],
      ['run', runUrl, () => phone.getByRole('heading', { name: 'From the browser FINISHED' }), ['Device sessions']],
      ['start-run', '#/start', () => phone.getByLabel('Device group'), []],
      ['devices', '#/devices', () => phone.getByRole('table', { name: 'Device groups' }), ['Devices', 'Device groups']],
      [
        'group',
        `#/groups/${group.id}`,
        () => phone.getByRole('table', { name: 'Devices in the group' }),
        ['Devices in the group'],
      ],
      ['account', '#/account', () => phone.getByRole('button', { name: 'Regenerate' }), []],
    ];
    for (const [name, address, loaded, tables] of pages) {
      await phone.goto(`${cloud.url}/${address}`);
      await loaded().waitFor();
      await fitsTheScreen(phone);
      for (const label of tables) await fitsItsBox(phone.getByRole('table', { name: label }));
      await screenshot(phone, `${name}-phone`);
    }

    const ops = await openPage(PHONE);
    await signIn(ops, 'ops@example.com', 'ops-password');
    await ops.getByRole('link', { name: 'Operators' }).click();
    await ops.getByRole('table', { name: 'Devices of web-host' }).waitFor();
    await fitsTheScreen(ops);
    await screenshot(ops, 'operators-phone');
  }, 60_000);

  /** A table whose columns all show without scrolling its box sideways. */
  async function fitsItsBox(table: Locator): Promise<void> {
    const overflow = await table.evaluate(
      (element: { parentElement: { scrollWidth: number; clientWidth: number } }) =>
        element.parentElement.scrollWidth - element.parentElement.clientWidth,
    );
    expect(
      overflow,
      `the table ${await table.getAttribute('aria-label')} is ${overflow}px wider than a phone`,
    ).toBeLessThanOrEqual(0);
  }

  /** The API as the user, with the key they hold now. */
  function keyed(apiKey: string): CloudUser['api'] {
    const auth = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
    return async (method, route, body) => {
      const response = await fetch(`${cloud.url}/api${route}`, {
        method,
        headers: {
          authorization: auth,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
    };
  }
});
