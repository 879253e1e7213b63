/**
 * Appium client side with selenium-webdriver (issue 19): the npm registry's Selenium client drives
 * a virtual Android device through /wd/hub of a real `devicecloud local` process, as a Selenium
 * test on a CI machine would: find, type, click, assert, screenshot, quit. Then, through the
 * public API only, the session is a device session with its command log and its screenshot.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Builder, By, type WebDriver } from 'selenium-webdriver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProcess, cliBudget, startCli } from '../support/cli.ts';
import { until } from '../support/until.ts';

const SAMPLE_APP = path.resolve(import.meta.dirname, '../../examples/dist/sample-app.apk');

describe('selenium-webdriver against devicecloud local', { timeout: cliBudget(1, 120_000) }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-selenium-'));
  let local: RunningProcess;
  let url: string;
  let key: string;

  beforeAll(async () => {
    local = startCli(['local', '--port', '0', '--data-dir', path.join(dir, 'cloud')]);
    [, url] = (await local.waitFor(/running at (http:\/\/\S+)/)) as [string, string];
    [, key] = (await local.waitFor(/API key\s+([A-Za-z0-9]{32})/)) as [string, string];
  }, cliBudget(1));
  afterAll(async () => {
    await local?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = async (method: string, pathname: string, body?: FormData) => {
    const answer = await fetch(`${url}${pathname}`, {
      method,
      body,
      headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`, accept: 'application/json' },
    });
    expect(answer.status, pathname).toBeLessThan(300);
    return (await answer.json()) as any;
  };

  it('finds, types, clicks, asserts, takes a screenshot and quits; the API shows the session, its commands and screenshot', async () => {
    const form = new FormData();
    form.append('file', new Blob([fs.readFileSync(SAMPLE_APP)]), 'sample-app.apk');
    const app = await api('POST', '/api/me/files', form);

    const driver: WebDriver = await new Builder()
      .usingServer(`${url}/wd/hub`)
      .withCapabilities({
        // Selenium's builder insists on a browser name; the hub passes it on and the device ignores it.
        browserName: '',
        platformName: 'Android',
        'appium:automationName': 'UiAutomator2',
        'bitbar:options': { apiKey: key, app: app.id, project: 'Selenium', testrun: 'selenium-webdriver' },
      })
      .build();
    const sessionId = (await driver.getSession()).getId();
    expect(sessionId).toMatch(/^[0-9a-f]{32}$/);
    try {
      // By.id and By.className arrive as CSS selectors (W3C has neither), By.xpath as XPath.
      await driver.findElement(By.id('input')).sendKeys('Selenium');
      await driver.findElement(By.name('submit')).click();
      expect(await driver.findElement(By.xpath('//*[@content-desc="message"]')).getText()).toBe('Hello, Selenium!');
      expect(await driver.findElements(By.className('android.widget.Button'))).toHaveLength(2);
      expect(await driver.findElement(By.css('#title')).getText()).toBe('MainActivity');
      const shot = Buffer.from(await driver.takeScreenshot(), 'base64');
      expect(shot.subarray(1, 4).toString()).toBe('PNG');
      // A W3C error comes back as Selenium's own error class.
      await expect(driver.findElement(By.id('nowhere'))).rejects.toMatchObject({ name: 'NoSuchElementError' });
    } finally {
      await driver.quit();
    }

    const runs = await api('GET', '/api/me/runs?limit=0');
    const run = runs.data.find((each: any) => each.displayName === 'selenium-webdriver');
    expect(run).toBeDefined();
    const [deviceSession] = (await api('GET', `/api/me/runs/${run.id}/device-sessions`)).data;
    await until(
      async () => (await api('GET', `/api/device-sessions/${deviceSession.id}`)).state,
      (state) => state === 'SUCCEEDED',
      60_000,
    );
    const commands = (await api('GET', `/api/device-sessions/${deviceSession.id}/commands?limit=0`)).data;
    const lines = commands.map((command: any) => `${command.method} ${command.uri} ${command.statusCode}`);
    expect(lines[0]).toBe('POST /wd/hub/session 200');
    expect(lines).toContain(`GET /wd/hub/session/${sessionId}/screenshot 200`);
    expect(lines).toContain(`POST /wd/hub/session/${sessionId}/element 404`);
    expect(lines.at(-1)).toBe(`DELETE /wd/hub/session/${sessionId} 200`);
    expect(commands.every((command: any) => command.sessionId === sessionId)).toBe(true);
    const screenshots = (await api('GET', `/api/device-sessions/${deviceSession.id}/screenshots`)).data;
    expect(screenshots.map((screenshot: any) => screenshot.originalName)).toEqual(['001-screenshot.png']);
  });
});
