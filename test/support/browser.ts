/**
 * The dashboard's browser tests (test/e2e/dashboard-*): Debian's Chromium, the cloud they sign in
 * to, and the dashboard's sign-in as a user goes through it.
 */
import fs from 'node:fs';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { cliBudget } from './cli.ts';
import { Cloud } from './cloud.ts';

/** The password `Cloud.user` gives every user it makes. */
export const E2E_PASSWORD = 'e2e-password';

export const CHROMIUM = process.env.DEVICECLOUD_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Whether Chromium is here for the browser test of `what`. Without it the test is skipped where
 * anyone can see it, except where the suite must run it (CI sets DEVICECLOUD_REQUIRE_BROWSER=1):
 * there the file fails instead, as a green run without the browser tests would hide a missing install.
 */
export function chromiumFor(what: string): boolean {
  if (fs.existsSync(CHROMIUM)) return true;
  if (process.env.DEVICECLOUD_REQUIRE_BROWSER === '1')
    throw new Error(`Chromium is required (DEVICECLOUD_REQUIRE_BROWSER=1) but ${CHROMIUM} is missing`);
  console.warn(
    `\n*** ${CHROMIUM} is not installed: the ${what} browser test is SKIPPED (apt-get install chromium) ***\n`,
  );
  return false;
}

/**
 * Inside a `describe`: a cloud with one agent of `devices` virtual devices, and Chromium, started
 * before the file's tests (and before the hooks registered after this call) and stopped after them.
 */
export function chromiumCloud(hostName: string, devices: number): { cloud: Cloud; browser: () => Browser } {
  const cloud = new Cloud();
  let browser: Browser | undefined;
  beforeAll(async () => {
    await cloud.startServer();
    await cloud.startAgent(hostName, devices);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, cliBudget(4));
  afterAll(async () => {
    await browser?.close();
    await cloud.stop();
  }, 60_000);
  return {
    cloud,
    browser: () => {
      if (browser === undefined) throw new Error('Chromium has not started: use browser() inside a test');
      return browser;
    },
  };
}

/** Opens the dashboard at `url` and signs in; resolves once the projects page shows. */
export async function signIn(page: Page, url: string, email: string, password = E2E_PASSWORD): Promise<void> {
  await page.goto(url);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
}
