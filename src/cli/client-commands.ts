/**
 * The client commands that read and act through the public API: login, me, projects, runs,
 * devices, groups, files, frameworks. Tables for people by default, JSON with --json.
 */
import readline from 'node:readline/promises';
import type { Command } from 'commander';
import { type DevicecloudClient, createClient } from '../client/api-client.ts';
import { CliError } from './cli-error.ts';
import { checkServerUrl, resolveClientSettings, saveCredentials } from './client-settings.ts';
import { bytes, table, when } from './table.ts';

export interface ClientFlags {
  readonly server?: string;
  readonly apiKey?: string;
  readonly json?: boolean;
}

export function addClientOptions(command: Command): Command {
  return command
    .option('--server <url>', 'devicecloud server (env DEVICECLOUD_URL, or devicecloud login)')
    .option('--api-key <key>', 'your API key (env DEVICECLOUD_API_KEY, or devicecloud login)')
    .option('--json', 'print JSON for scripts');
}

type Print = (line: string) => void;

/** A client command: resolves the settings, runs, prints a table or JSON. */
function clientCommand<A extends unknown[]>(
  parent: Command,
  spec: string,
  description: string,
  examples: string,
  work: (
    client: DevicecloudClient,
    print: Print,
    flags: ClientFlags & Record<string, unknown>,
    ...args: A
  ) => Promise<void>,
): Command {
  const command = addClientOptions(parent.command(spec))
    .description(description)
    .addHelpText('after', `\nExamples:\n${examples}`);
  command.action(async (...received: unknown[]) => {
    // commander passes the positional arguments, then the options, then the command.
    const flags = received[received.length - 2] as ClientFlags & Record<string, unknown>;
    const args = received.slice(0, received.length - 2) as A;
    const client = createClient(resolveClientSettings(flags));
    await work(client, (line) => process.stdout.write(`${line}\n`), flags, ...args);
    process.exitCode = 0;
  });
  return command;
}

const asId = (what: string, value: string): number => {
  if (!/^\d+$/.test(value)) throw new CliError(`${what} must be a number, not '${value}'`);
  return Number(value);
};

export function registerClientCommands(program: Command): void {
  program
    .command('login')
    .description('Save the server and your API key for later commands (in a file only you can read)')
    .requiredOption('--server <url>', 'devicecloud server, e.g. http://127.0.0.1:8080')
    .option('--api-key <key>', 'your API key (asked for when not given)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ devicecloud login --server https://devicecloud.example.com\n  $ devicecloud login --server http://127.0.0.1:8080 --api-key "$KEY"',
    )
    .action(async (flags: { server: string; apiKey?: string }) => {
      const url = checkServerUrl(flags.server, '--server');
      let apiKey = flags.apiKey ?? (process.env.DEVICECLOUD_API_KEY || undefined);
      if (apiKey === undefined) {
        if (process.stdin.isTTY !== true)
          throw new CliError('Give --api-key (or DEVICECLOUD_API_KEY): there is no terminal to ask on');
        const prompt = readline.createInterface({ input: process.stdin, output: process.stderr });
        apiKey = (await prompt.question('API key (from your account page): ')).trim();
        prompt.close();
      }
      const me = await createClient({ url, apiKey }).me();
      const file = saveCredentials({ url, apiKey });
      process.stdout.write(`Signed in to ${url} as ${me.email}; saved to ${file}\n`);
      process.exitCode = 0;
    });

  clientCommand(program, 'me', 'Show your account', '  $ devicecloud me --json', async (client, print, { json }) => {
    const me = await client.me();
    if (json) return print(JSON.stringify(me));
    print(table(['id', 'email', 'roles'], [[me.id, me.email, (me.roles ?? []).map((role) => role.name).join(', ')]]));
  });

  clientCommand<[string | undefined]>(
    program,
    'projects [id]',
    'List your projects, or show one',
    '  $ devicecloud projects\n  $ devicecloud projects 12 --json',
    async (client, print, { json }, id) => {
      if (id !== undefined) {
        const project = await client.project(asId('project id', id));
        return print(
          json
            ? JSON.stringify(project)
            : table(
                ['id', 'name', 'type', 'created'],
                [[project.id, project.name, project.type, when(project.createTime)]],
              ),
        );
      }
      const projects = await client.projects();
      print(
        json
          ? JSON.stringify(projects)
          : table(
              ['id', 'name', 'type', 'runs', 'created'],
              projects.map((p) => [p.id, p.name, p.type, p.testRunCount ?? null, when(p.createTime)]),
            ),
      );
    },
  );

  const runs = program.command('runs').description('List, show, abort and retry test runs');
  clientCommand<[]>(
    runs,
    'list',
    'List the runs of a project (or of all projects)',
    '  $ devicecloud runs list --project 3\n  $ devicecloud runs list --json',
    async (client, print, { json, project: projectFlag }) => {
      const projects =
        projectFlag === undefined
          ? await client.projects()
          : [await client.project(asId('--project', String(projectFlag)))];
      const all = (await Promise.all(projects.map((project) => client.runs(project.id))))
        .flat()
        .sort((a, b) => b.createTime - a.createTime);
      print(
        json
          ? JSON.stringify(all)
          : table(
              ['id', 'project', 'name', 'state', 'devices', 'passed', 'failed', 'created'],
              all.map((r) => [
                r.id,
                r.projectName,
                r.displayName,
                r.state,
                `${r.finishedDeviceCount}/${r.deviceCount}`,
                r.successfulTestCaseCount,
                r.failedTestCaseCount,
                when(r.createTime),
              ]),
            ),
      );
    },
  ).option('--project <id>', 'only this project');
  clientCommand<[string]>(
    runs,
    'show <id>',
    'Show a run and its device sessions',
    '  $ devicecloud runs show 42',
    async (client, print, { json }, id) => {
      const runId = asId('run id', id);
      const [run, sessions] = await Promise.all([client.run(runId), client.deviceSessions(runId)]);
      if (json) return print(JSON.stringify({ ...run, deviceSessions: sessions }));
      print(
        `Run ${run.id} (${run.displayName}) in '${run.projectName}': ${run.state}${run.message ? `: ${run.message}` : ''}`,
      );
      print(
        table(
          ['session', 'device', 'state', 'passed', 'failed', 'retry'],
          sessions.map((s) => [
            s.id,
            s.device.displayName,
            s.state,
            s.testCasePassedCount,
            s.testCaseFailedCount,
            s.retryState,
          ]),
        ),
      );
    },
  );
  clientCommand<[string]>(
    runs,
    'abort <id>',
    'Abort a run (partial results are kept)',
    '  $ devicecloud runs abort 42',
    async (client, print, { json }, id) => {
      const run = await client.abortRun(asId('run id', id));
      print(json ? JSON.stringify(run) : `Run ${run.id} aborted`);
    },
  );
  clientCommand<[string]>(
    runs,
    'retry <id>',
    'Retry the device sessions of a run that did not succeed',
    '  $ devicecloud runs retry 42',
    async (client, print, { json }, id) => {
      const runId = asId('run id', id);
      // Named, since a retry without ids retries the whole run.
      const failed = (await client.deviceSessions(runId))
        .filter((session) => ['FAILED', 'WARNING', 'TIMEOUT', 'ABORTED'].includes(session.state))
        .map((session) => session.id);
      if (failed.length === 0) throw new CliError(`No device session of run ${runId} failed: nothing to retry`);
      const run = await client.retryRun(runId, failed);
      print(json ? JSON.stringify(run) : `Run ${run.id} is ${run.state} again`);
    },
  );

  clientCommand(
    program,
    'devices',
    'List the devices of the cloud',
    '  $ devicecloud devices\n  $ devicecloud devices --json',
    async (client, print, { json }) => {
      const devices = await client.devices();
      print(
        json
          ? JSON.stringify(devices)
          : table(
              ['id', 'name', 'os', 'version', 'online', 'busy'],
              devices.map((d) => [
                d.id,
                d.displayName,
                d.osType,
                d.softwareVersion.releaseVersion,
                d.online ? 'yes' : 'no',
                d.locked ? 'yes' : 'no',
              ]),
            ),
      );
    },
  );
  clientCommand(
    program,
    'groups',
    'List your device groups and the public ones',
    '  $ devicecloud groups',
    async (client, print, { json }) => {
      const groups = await client.deviceGroups();
      print(
        json
          ? JSON.stringify(groups)
          : table(
              ['id', 'name', 'os', 'devices', 'public'],
              groups.map((g) => [g.id, g.displayName, g.osType, g.deviceCount, g.isPublic ? 'yes' : 'no']),
            ),
      );
    },
  );
  clientCommand(
    program,
    'files',
    'List your uploaded files',
    '  $ devicecloud files --json',
    async (client, print, { json }) => {
      const files = await client.files();
      print(
        json
          ? JSON.stringify(files)
          : table(
              ['id', 'name', 'type', 'size', 'uploaded'],
              files.map((f) => [f.id, f.name, f.inputType, bytes(f.size), when(f.createTime)]),
            ),
      );
    },
  );
  clientCommand(
    program,
    'frameworks',
    'List the test frameworks you can run',
    '  $ devicecloud frameworks',
    async (client, print, { json }) => {
      const frameworks = await client.frameworks();
      print(
        json
          ? JSON.stringify(frameworks)
          : table(
              ['id', 'name', 'os', 'app', 'tests', 'available'],
              frameworks.map((f) => [
                f.id,
                f.name,
                f.osType,
                f.requiredAppExtensions || '-',
                f.requiredTestExtensions || '-',
                f.available ? 'yes' : `no: ${f.unavailableReason}`,
              ]),
            ),
      );
    },
  );
}
