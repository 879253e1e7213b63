/**
 * Child process of the API read benchmark: the production server role (`startServer`, SQLite on
 * disk or the PostgreSQL database given, the default log level) with one user, one project of 20
 * runs of 10 device runs each. Announces (READY) {url, apiKey, projectId, database} when it listens:
 * `database` is the SQLite file or the PostgreSQL URL, for the hand-written baseline to read.
 */
import fs from 'node:fs';
import { READY } from './processes.ts';
import { loadConfig, sqliteFile } from '../../src/config.ts';
import { startServer } from '../../src/server/start.ts';
import { seedProject } from './seed.ts';

const [dataDir, databaseUrl] = process.argv.slice(2);
if (dataDir === undefined) throw new Error('usage: api-server.ts DATA_DIR [POSTGRES_URL]');
fs.mkdirSync(dataDir, { recursive: true });
// No rate limit: the benchmark loads one user far beyond what the default limit lets through.
const config = loadConfig({ flags: { dataDir, port: '0', rateLimitPerUser: '0', databaseUrl } });
const server = await startServer(config);
const { user, project } = await seedProject(server.ctx, { name: 'reader', runs: 20, deviceRunsPerRun: 10 });
process.stdout.write(
  `${READY}${JSON.stringify({ url: server.localUrl, apiKey: user.apiKey, projectId: project.id, database: databaseUrl ?? sqliteFile(config) })}\n`,
);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
