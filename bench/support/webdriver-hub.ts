/**
 * Child process of the WebDriver relay benchmark: the production server role (`startServer`,
 * SQLite on disk or the PostgreSQL database given, the default log level), with an agent token,
 * a user and an app for the session. Announces (READY) {url, token, apiKey, appId}.
 */
import fs from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server/start.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import * as fixtures from '../../test/support/fixtures.ts';
import { READY } from './processes.ts';
import { seedUser } from './seed.ts';

const [dataDir, databaseUrl] = process.argv.slice(2);
if (dataDir === undefined) throw new Error('usage: webdriver-hub.ts DATA_DIR [POSTGRES_URL]');
fs.mkdirSync(dataDir, { recursive: true });
const config = loadConfig({ flags: { dataDir, port: '0', rateLimitPerUser: '0', databaseUrl } });
const server = await startServer(config);
const { token } = await issueAgentToken(server.ctx, 'bench-appium');
const user = await seedUser(server.ctx, 'webdriver');
const app = await fixtures.file(server.ctx, user, { name: 'app.apk', inputType: 'APPLICATION', osType: 'ANDROID' });
process.stdout.write(
  `${READY}${JSON.stringify({ url: server.localUrl, token, apiKey: user.apiKey, appId: app.id })}\n`,
);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
