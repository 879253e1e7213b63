/** `devicecloud agent`: the agent role, run on each device host. */
import path from 'node:path';
import type { Command } from 'commander';
import type { Lifecycle } from './server-commands.ts';
import { addDriverOptions, addZipOptions, configFrom } from './options.ts';

export function registerAgentCommand(program: Command, lifecycle: Lifecycle): void {
  addZipOptions(addDriverOptions(program.command('agent')))
    .description('Run the agent of a device host: it registers its devices with a server and runs their device runs')
    .option(
      '--server <urls>',
      'the server to work for, or several separated by commas, tried in turn (env DEVICECLOUD_SERVER_URL)',
    )
    .option(
      '--token <token>',
      'agent token from `devicecloud admin create-agent-token` (prefer env DEVICECLOUD_AGENT_TOKEN: flags show in ps)',
    )
    .option('--data-dir <dir>', 'working files and input cache (env DEVICECLOUD_DATA_DIR; default ./data)')
    .option('--config <file>', 'JSON file of settings')
    .option(
      '--flavour <flavour>',
      "the cloud's flavour, public, private or enterprise: how strictly customer code is sandboxed (env DEVICECLOUD_FLAVOUR; default private)",
    )
    .action(async (options) => {
      const config = await configFrom(options);
      // The agent role, loaded only when it runs (main.ts says why).
      const { ConfigError, zipLimitsOf } = await import('../config.ts');
      const { startAgent } = await import('../agent/agent.ts');
      const { chooseSandbox } = await import('../agent/drivers/host/sandbox-choice.ts');
      const { driverFromConfig } = await import('../agent/drivers/index.ts');
      if (config.serverUrls === undefined)
        throw new ConfigError('The agent needs --server (or DEVICECLOUD_SERVER_URL)');
      if (config.agentToken === undefined)
        throw new ConfigError(
          'The agent needs --token (or DEVICECLOUD_AGENT_TOKEN); create one with devicecloud admin create-agent-token --name <host>',
        );
      const dataDir = path.join(config.dataDir, 'agent');
      const sandbox = chooseSandbox(config, dataDir, (line) => lifecycle.print(`[agent] ${line}`));
      lifecycle.print(`[agent] customer code runs in: ${sandbox.description}`);
      const agent = startAgent({
        serverUrls: config.serverUrls,
        token: config.agentToken,
        driver: driverFromConfig(config, dataDir, sandbox),
        dataDir,
        cacheMaxBytes: config.agentCacheMaxBytes,
        zipLimits: zipLimitsOf(config),
        flavour: config.flavour,
        log: (message) => lifecycle.print(`[agent] ${message}`),
      });
      lifecycle.untilSignal(() => agent.stop());
      // Started by `devicecloud local` (an IPC channel to it): when that process is gone, however
      // it ended, this agent stops too rather than calling a server that will not come back.
      if (process.send !== undefined) process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
      await agent.ready;
    });
}
