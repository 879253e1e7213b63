/**
 * Results at a glance in Chromium (docs/api.md#results-at-a-glance): a failed run shows red on the
 * project list, and a project with a flaky test names it with its history, linking to the failing
 * session. Real `devicecloud serve` and agent processes, as test/e2e/dashboard.test.ts runs them.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/api-client.ts';
import { cliBudget } from '../support/cli.ts';
import { chromiumCloud, chromiumFor, signIn } from '../support/browser.ts';
import { type CloudUser, until } from '../support/cloud.ts';
import { zip } from '../support/zips.ts';

const available = chromiumFor('results at a glance');
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');

/** Passes on a session with an even id and fails on an odd one: on two devices, one of each. */
const FLAKY_PACKAGE = `#!/usr/bin/env bash
set -euo pipefail
mkdir -p "$OUTPUT_DIR"
if [ $(( DEVICE_RUN_ID % 2 )) -eq 0 ]; then verdict='/>'; else verdict='><failure message="timing">boom</failure></testcase>'; fi
cat > "$OUTPUT_DIR/junit.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Shop" tests="2">
  <testcase classname="com.example.CartTest" name="testStable" time="0.1"/>
  <testcase classname="com.example.CartTest" name="testSometimes" time="0.1"$verdict
</testsuite>
XML
`;

describe.runIf(available)('results at a glance in Chromium', () => {
  const { cloud, browser } = chromiumCloud('glance-host', 2);
  let user: CloudUser;
  const problems: string[] = [];

  beforeAll(async () => {
    user = await cloud.user('glance@example.com', 'GOLD');
  }, cliBudget(4));

  async function signedIn(): Promise<Page> {
    const page = await (await browser().newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    await signIn(page, `${cloud.url}/#/`, 'glance@example.com');
    return page;
  }

  it('names a flaky test with its history on the project page, and shows the failed run red on the project list', async () => {
    const client = createClient({ url: cloud.url, apiKey: user.apiKey });
    const packagePath = path.join(cloud.dataDir, 'flaky-tests.zip');
    fs.writeFileSync(packagePath, await zip([['run-tests.sh', FLAKY_PACKAGE, 0o100755]]));
    const app = (await client.upload(path.join(EXAMPLES, 'sample-app.apk'))).id;
    const tests = (await client.upload(packagePath)).id;
    const devices = (await client.devices()).filter((device) => device.osType === 'ANDROID').slice(0, 2);
    expect(devices).toHaveLength(2);
    const run = await client.startRun({
      osType: 'ANDROID',
      frameworkId: 4,
      projectName: 'Flaky shop',
      deviceIds: devices.map((device) => device.id),
      files: [
        { id: app, action: 'INSTALL' },
        { id: tests, action: 'RUN_TEST' },
      ],
    });
    const finished = await until(
      () => user.api('GET', `/v2/runs/${run.id}`),
      (answer) => answer.body.state === 'FINISHED',
      90_000,
    );
    expect(finished.body.failedTestCaseCount).toBe(1);
    const sessions: Array<{ id: number; state: string }> = (await user.api('GET', `/v2/runs/${run.id}/device-sessions`))
      .body.data;
    const failing = sessions.find((session) => session.state === 'FAILED')!;
    expect(failing).toBeDefined();

    const page = await signedIn();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'Flaky shop' }) });
    const result = row.locator('[data-result]');
    await expect.poll(() => result.getAttribute('data-result')).toBe('FAILED');
    expect(await result.textContent()).toBe('Failed');
    // Red: the colour the stylesheet gives failures, not the muted one of a mere FINISHED.
    // Runs in the browser; typed by hand, as the project's TypeScript has no DOM types.
    const colourOf = (element: unknown) =>
      (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(element).color;
    const colour = await result.evaluate(colourOf);
    const failedColour = await page.evaluate<string>(
      "(() => { const probe = document.createElement('span'); probe.className = 'state state-FAILED'; document.body.append(probe); const c = getComputedStyle(probe).color; probe.remove(); return c; })()",
    );
    const finishedColour = await page.evaluate<string>(
      "(() => { const probe = document.createElement('span'); probe.className = 'state state-FINISHED'; document.body.append(probe); const c = getComputedStyle(probe).color; probe.remove(); return c; })()",
    );
    expect(colour).toBe(failedColour);
    expect(colour).not.toBe(finishedColour);
    expect(await row.textContent()).toContain('0% (0 of 1)');

    await page.getByRole('link', { name: 'Flaky shop' }).click();
    const flaky = page.getByRole('table', { name: 'Flaky tests' });
    await flaky.getByText('testSometimes').waitFor();
    expect(await flaky.textContent()).not.toContain('testStable');
    const entries = flaky.getByRole('listitem');
    expect(await entries.count()).toBe(2);
    expect((await entries.allTextContents()).map((text) => text.split(' ')[0]).sort()).toEqual(['FAILED', 'PASSED']);
    const failedEntry = entries.filter({ hasText: 'FAILED' });
    await failedEntry.getByRole('link').click();
    await expect.poll(() => page.url()).toContain(`/device-sessions/${failing.id}`);

    // The devices page: a thumbnail per device, with its state.
    await page.getByRole('link', { name: 'Devices' }).click();
    const tiles = page.getByRole('list', { name: 'Device thumbnails' }).getByRole('listitem');
    await expect.poll(() => tiles.count()).toBe(2);
    expect(await tiles.first().textContent()).toMatch(/IDLE|CLEANING|TESTING/);
    expect(problems).toEqual([]);
  }, 180_000);
});
