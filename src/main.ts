/**
 * The `devicecloud` command: parses the command line, starts the chosen role, and is the only
 * place that exits the process. Exit codes: 0 done, 1 failed (for `run`: tests failed), 2 the cloud
 * failed (unreachable, 5xx, infrastructure errors), 3 bad usage or configuration (cli/cli-error.ts).
 *
 * Every command is declared here at once (help lists them all), but a command's action imports its
 * role (server, store, agent, config) only when it runs: `--version`, `--help` and the client
 * commands load commander and the HTTP client, not Fastify, Kysely or the database drivers
 * (test/e2e/cli-startup.test.ts).
 */
import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './cli/admin-commands.ts';
import { registerAgentCommand } from './cli/agent-command.ts';
import { describeClientError } from './cli/cli-error.ts';
import { registerClientCommands } from './cli/client-commands.ts';
import { registerRunCommand } from './cli/run-command.ts';
import { type Lifecycle, registerServerCommands } from './cli/server-commands.ts';
import { AppError } from './domain/errors.ts';
import { VERSION } from './version.ts';

const EXIT_FAILED = 1;
const EXIT_USAGE = 3;

const print = (line: string) => process.stdout.write(`${line}\n`);

const lifecycle: Lifecycle = {
  print,
  untilSignal(stop) {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(EXIT_FAILED);
      stopping = true;
      process.stderr.write(`\n${signal}: stopping…\n`);
      stop().then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`error while stopping: ${(error as Error).message}\n`);
          process.exit(EXIT_FAILED);
        },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  },
};

const program = new Command('devicecloud')
  .description('A self-hostable mobile device-testing cloud')
  .version(VERSION)
  .exitOverride()
  .showHelpAfterError();
registerServerCommands(program, lifecycle);
registerAdminCommands(program, print);
registerAgentCommand(program, lifecycle);
registerRunCommand(program, process.stdout);
registerClientCommands(program);
program.addHelpText(
  'after',
  `
Examples:
  $ npm start                                   # devicecloud local: the whole cloud on this machine
  $ devicecloud login --server http://127.0.0.1:8080 --api-key KEY
  $ devicecloud run --app app.apk --tests tests.zip --group "All Android devices" --wait
  $ devicecloud runs list --json`,
);

try {
  await program.parseAsync(process.argv);
  // Client commands set their code; servers and agents stay up until a signal.
  if (process.exitCode !== undefined) process.exit(process.exitCode);
} catch (error) {
  process.exit(await exitCodeOf(error));
}

async function exitCodeOf(error: unknown): Promise<number> {
  if (error instanceof CommanderError) {
    // Help and version end here too, with code 0; commander has already printed the message.
    return error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  const client = describeClientError(error);
  if (client !== undefined) {
    process.stderr.write(`devicecloud: ${client.line}\n`);
    return client.code;
  }
  // Loaded only here, on the way out: the commands that read the config have loaded it already.
  const { ConfigError } = await import('./config.ts');
  if (error instanceof ConfigError) {
    process.stderr.write(`devicecloud: ${error.message}\n`);
    return EXIT_USAGE;
  }
  if (error instanceof AppError) {
    process.stderr.write(`devicecloud: ${error.message}\n`);
    return error.statusCode === 400 ? EXIT_USAGE : EXIT_FAILED;
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'ECONNREFUSED') {
    process.stderr.write(`devicecloud: ${(error as Error).message}\n`);
    return EXIT_FAILED;
  }
  process.stderr.write(`devicecloud: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
  return EXIT_FAILED;
}
