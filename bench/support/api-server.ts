/**
 * Child process of the API read benchmark: the production server role (`startServer`, SQLite on
 * disk, the default log level) with one user, one project of 20 runs of 10 device runs each.
 * Announces (READY) {url, apiKey, projectId} when it listens.
 */
import fs from 'node:fs';
import { READY } from './processes.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server/start.ts';
import { seedProject } from './seed.ts';

const dataDir = process.argv[2];
if (dataDir === undefined) throw new Error('usage: api-server.ts DATA_DIR');
fs.mkdirSync(dataDir, { recursive: true });
// No rate limit: the benchmark loads one user far beyond what the default limit lets through.
const server = await startServer(loadConfig({ flags: { dataDir, port: '0', rateLimitPerUser: '0' } }));
const { user, project } = await seedProject(server.ctx, { name: 'reader', runs: 20, deviceRunsPerRun: 10 });
process.stdout.write(
  `${READY}${JSON.stringify({ url: server.localUrl, apiKey: user.apiKey, projectId: project.id })}\n`,
);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
