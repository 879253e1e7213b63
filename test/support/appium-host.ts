/**
 * A device host whose one phone takes Appium client side sessions through a real Appium 3 server
 * (the `appium` package with `@appium/fake-driver`, both from the npm registry), for the tests that
 * prove the relay against real Appium (test/integration/appium-real.test.ts). Run as a process of
 * its own so that a test can kill it: `node --import tsx appium-host.ts <server url> <token> <dataDir>`.
 * The phone is make-believe, its Appium server is not: serveThroughAppium starts it as the adb
 * driver does, with the host's capabilities naming the fake driver and its app (an XML screen).
 * Cleaning stops an Appium server a killed host left, and writes a line to <dataDir>/cleaned.log.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startAgent } from '../../src/agent/agent.ts';
import type { Driver } from '../../src/agent/driver.ts';
import { serveThroughAppium, stopLeftoverAppium } from '../../src/agent/drivers/host/appium-server.ts';
import { noRecording } from '../../src/agent/drivers/host/ffmpeg.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const APPIUM_BIN = path.join(ROOT, 'node_modules/.bin/appium');
export const FAKE_APP = path.join(ROOT, 'test/fixtures/appium/fake-app.xml');
/** Appium finds the fake driver among the project's own dependencies. */
export const APPIUM_ENV = { ...process.env, APPIUM_HOME: ROOT };
export const PHONE = 'fake-phone-1';
/** Where the phone's Appium server's pid is while a session runs. */
export const appiumPidFile = (dataDir: string) => path.join(dataDir, 'appium.pid');

export function appiumHostDriver(dataDir: string): Driver {
  return {
    name: 'appium-host',
    listDevices: async () => [
      {
        serial: PHONE,
        displayName: 'Fake Phone',
        manufacturer: 'Appium',
        osType: 'ANDROID',
        platform: 'ANDROID',
        releaseVersion: '14',
        apiLevel: 34,
        executionKinds: ['appium-client'],
      },
    ],
    health: async () => ({ ok: true }),
    execute: (job, context) =>
      serveThroughAppium(job, context, {
        command: APPIUM_BIN,
        capabilities: { platformName: 'Fake', 'appium:automationName': 'Fake', 'appium:app': FAKE_APP },
        env: APPIUM_ENV,
        pidFile: appiumPidFile(dataDir),
      }),
    // As the adb driver's: an Appium server a killed agent left behind is stopped first.
    clean: async (serial) => {
      const leftover = await stopLeftoverAppium(appiumPidFile(dataDir));
      fs.appendFileSync(path.join(dataDir, 'cleaned.log'), `${new Date().toISOString()} ${serial} ${leftover ?? ''}\n`);
      return { ok: true, report: leftover ?? 'nothing to clean on a make-believe phone' };
    },
    record: async () => noRecording('a make-believe phone has no screen to record'),
    missingTools: () => [],
    close: async () => undefined,
  };
}

if (process.argv[1] === import.meta.filename) {
  const [url, token, dataDir] = process.argv.slice(2) as [string, string, string];
  const agent = startAgent({
    serverUrls: [url],
    token,
    driver: appiumHostDriver(dataDir),
    dataDir,
    log: (message) => console.log(message),
  });
  await agent.ready;
  console.log('appium host ready');
  process.once('SIGTERM', () => void agent.stop().then(() => process.exit(0)));
}
