/** `devicecloud agent`: the agent role, run on each device host. */
import path from 'node:path';
import type { Command } from 'commander';
import { startAgent } from '../agent/agent.ts';
import { createDriver } from '../agent/drivers/index.ts';
import { ConfigError } from '../config.ts';
import type { Lifecycle } from './server-commands.ts';
import { configFrom } from './options.ts';

export function registerAgentCommand(program: Command, lifecycle: Lifecycle): void {
  program
    .command('agent')
    .description('Run the agent of a device host: it registers its devices with a server and runs their device runs')
    .option('--server <urls>', 'the server to work for, or several separated by commas, tried in turn (env DEVICECLOUD_SERVER_URL)')
    .option('--token <token>', 'agent token from `devicecloud admin create-agent-token` (prefer env DEVICECLOUD_AGENT_TOKEN: flags show in ps)')
    .option('--driver <driver>', 'virtual, adb or ios (env DEVICECLOUD_DRIVER; default virtual)')
    .option('--devices <n>', 'virtual driver: number of devices, two thirds Android (env DEVICECLOUD_DEVICES; default 6)')
    .option('--serial-prefix <prefix>', 'virtual driver: start of the device serials, different on each host of a cloud (env DEVICECLOUD_SERIAL_PREFIX; default virtual)')
    .option('--ios-bin <file>', 'ios driver: the go-ios executable (env DEVICECLOUD_IOS_BIN; default: the go-ios npm package, else ios on PATH)')
    .option('--ios-signing <dir>', 'ios driver: folder with the service\'s profile.mobileprovision and identity.p12 (env DEVICECLOUD_IOS_SIGNING_DIR)')
    .option('--ios-signer <signer>', 'ios driver: go-ios, or the path of zsign (env DEVICECLOUD_IOS_SIGNER; default go-ios)')
    .option('--data-dir <dir>', 'working files and input cache (env DEVICECLOUD_DATA_DIR; default ./data)')
    .option('--config <file>', 'JSON file of settings')
    .action(async (options) => {
      const config = configFrom(options);
      if (config.serverUrls === undefined) throw new ConfigError('The agent needs --server (or DEVICECLOUD_SERVER_URL)');
      if (config.agentToken === undefined) throw new ConfigError('The agent needs --token (or DEVICECLOUD_AGENT_TOKEN); create one with devicecloud admin create-agent-token --name <host>');
      const dataDir = path.join(config.dataDir, 'agent');
      const agent = startAgent({
        serverUrls: config.serverUrls,
        token: config.agentToken,
        driver: createDriver(config.driver, {
          dataDir,
          virtualDevices: config.virtualDevices,
          virtualPrefix: config.virtualPrefix,
          ios: { binary: config.iosBinary, signingDir: config.iosSigningDir, signer: config.iosSigner },
        }),
        dataDir,
        log: (message) => lifecycle.print(`[agent] ${message}`),
      });
      lifecycle.untilSignal(() => agent.stop());
      await agent.ready;
    });
}
