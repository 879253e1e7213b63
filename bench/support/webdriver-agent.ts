/**
 * Child process of the WebDriver relay benchmark: a device host's agent holding one device served
 * by a real Appium 3 server with its fake driver (test/support/appium-host.ts), as on a host of its
 * own. Announces (READY) {} once the server knows its device.
 * Arguments: SERVER_URL TOKEN DATA_DIR; BENCH_WEBDRIVER_CHANNEL=0 keeps it on the HTTP long poll.
 */
import fs from 'node:fs';
import { startAgent } from '../../src/agent/agent.ts';
import { appiumHostDriver } from '../../test/support/appium-host.ts';
import { READY } from './processes.ts';

const [serverUrl, token, dataDir] = process.argv.slice(2);
if (serverUrl === undefined || token === undefined || dataDir === undefined)
  throw new Error('usage: webdriver-agent.ts SERVER_URL TOKEN DATA_DIR');
fs.mkdirSync(dataDir, { recursive: true });
const agent = startAgent({
  serverUrls: [serverUrl],
  token,
  driver: appiumHostDriver(dataDir),
  dataDir,
  log: () => undefined,
  webdriverSocket: process.env.BENCH_WEBDRIVER_CHANNEL !== '0',
});
await agent.ready;
process.stdout.write(`${READY}{}\n`);
process.on('SIGTERM', () => void agent.stop().then(() => process.exit(0)));
