/** `devicecloud local` (the whole cloud on this machine: the server, and an agent process) and `devicecloud serve` (the server role). */
import type { Command } from 'commander';
import type { RunningServer } from '../server/start.ts';
import { startAgentProcess } from './agent-process.ts';
import { addDriverOptions, addServerOptions, configFrom } from './options.ts';

export interface Lifecycle {
  /** Keeps the process alive until a signal, then runs `stop`. */
  untilSignal(stop: () => Promise<void>): void;
  print(line: string): void;
}

export function registerServerCommands(program: Command, lifecycle: Lifecycle): void {
  addDriverOptions(addServerOptions(program.command('local')))
    .description(
      'Start the local cloud: server, an agent process with virtual devices (or --driver adb|ios), SQLite under ./data, a demo account',
    )
    .action(async (options) => {
      const config = await configFrom(options, { logLevel: 'warn' });
      // The server role, loaded only when it runs (main.ts says why).
      const { sqliteFile } = await import('../config.ts');
      const { DEMO_EMAIL, DEMO_PASSWORD, ensureDemoAccount } = await import('../services/demo-account.ts');
      const { issueAgentToken } = await import('../services/agents.ts');
      const { startServer } = await import('../server/start.ts');
      const server = await startServer(config);
      const demo = await ensureDemoAccount(server.ctx);
      // The agent is a process of its own, speaking the protocol over loopback (agent-process.ts says why).
      const { token } = await issueAgentToken(server.ctx, 'local');
      const agent = startAgentProcess({
        serverUrl: server.localUrl,
        token,
        dataDir: config.dataDir,
        config,
        log: (line) => server.app.log.info(line),
        warn: (line) => server.app.log.warn(line),
      });
      try {
        await agent.ready;
      } catch (error) {
        await server.close();
        throw error;
      }
      printBanner(lifecycle, server, config.databaseUrl === undefined ? sqliteFile(config) : server.database.location);
      lifecycle.print(`  Demo user   ${DEMO_EMAIL} / ${DEMO_PASSWORD}`);
      lifecycle.print(`  API key     ${demo.apiKey}`);
      lifecycle.print(`  Try         curl -u ${demo.apiKey}: ${server.url}/api/me`);
      lifecycle.print('');
      lifecycle.untilSignal(async () => {
        await agent.stop();
        await server.close();
      });
    });

  addServerOptions(program.command('serve'))
    .description('Start the server role (API and scheduling) against SQLite or PostgreSQL')
    .action(async (options) => {
      const config = await configFrom(options);
      const { startServer } = await import('../server/start.ts');
      const server = await startServer(config);
      printBanner(lifecycle, server, server.database.location);
      lifecycle.untilSignal(server.close);
    });
}

function printBanner(lifecycle: Lifecycle, server: RunningServer, data: string): void {
  lifecycle.print('');
  lifecycle.print(`devicecloud is running at ${server.url}`);
  lifecycle.print(`  API         ${server.url}/api/v2   (OpenAPI: ${server.url}/api/v2/openapi.json)`);
  lifecycle.print(`  Database    ${server.database.dialect} ${data}`);
}
