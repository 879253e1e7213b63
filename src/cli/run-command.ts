/**
 * `devicecloud run`: upload the app and the tests, start a run, and with --wait follow it to the
 * end, download the results and exit with the code CI branches on (see cli-error.ts).
 */
import path from 'node:path';
import readline from 'node:readline/promises';
import type { Command } from 'commander';
import { type DevicecloudClient, createClient } from '../client/api-client.ts';
import type { ApiFile, TestRunConfig } from '../client/api-types.ts';
import { CliError, EXIT } from './cli-error.ts';
import { addClientOptions, type ClientFlags } from './client-commands.ts';
import { resolveClientSettings } from './client-settings.ts';
import {
  checkFile,
  checkTests,
  chooseDevices,
  chooseFramework,
  chooseGroup,
  osTypeOfApp,
  parseParams,
  parseTimeout,
} from './run-inputs.ts';
import { exitCodeOf, watchRun } from './run-watch.ts';
import { bytes } from './table.ts';
import fs from 'node:fs';

interface RunFlags extends ClientFlags {
  readonly app?: string;
  readonly tests?: string;
  readonly crawler?: boolean;
  readonly group?: string;
  readonly devices?: string;
  readonly project?: string;
  readonly framework?: string;
  readonly name?: string;
  readonly timeout?: string;
  readonly param: string[];
  readonly wait?: boolean;
  readonly results?: string;
  readonly junit?: string;
  readonly abortOnInterrupt?: boolean;
  readonly pollInterval?: string;
}

const EXAMPLES = `
Examples:
  $ devicecloud run --app app.apk --tests tests.zip --group "All Android devices" --wait
  $ devicecloud run --app app.apk --tests app-test.apk --devices 3,4 --framework 1 --wait --junit junit.xml
  $ devicecloud run --crawler --app app.ipa --group "All iOS devices" --wait --results results/
  $ devicecloud run --app app.apk --tests tests.zip --group 1 --param ENV=staging --timeout 900

Exit codes: 0 every device run succeeded, 1 tests failed, 2 infrastructure errors or timeouts,
3 bad usage (arguments, files, credentials, names), 130 interrupted.`;

export function registerRunCommand(program: Command, out: NodeJS.WriteStream): void {
  addClientOptions(program.command('run'))
    .description('Upload an app and its tests, start a run on a device group, and (with --wait) follow it to the end')
    .option('--app <file>', 'the app: .apk (Android) or .ipa (iOS)')
    .option('--tests <file>', 'the tests: a .zip with run-tests.sh, a test .apk, an XCUITest .ipa, ...')
    .option('--crawler', 'no tests: let the service explore the app (Android or iOS crawler)')
    .option('--group <name|id>', 'device group to run on (devicecloud groups lists them)')
    .option('--devices <ids>', 'or: comma-separated device ids')
    .option('--project <name>', 'project to run in (created when missing; default: the app name)')
    .option('--framework <name|id>', 'test framework (default: from the files; devicecloud frameworks lists them)')
    .option('--name <name>', 'name of the run')
    .option('--timeout <seconds>', 'time limit per device run')
    .option(
      '--param <KEY=VALUE>',
      'run parameter, handed to the tests as an environment variable (repeatable)',
      (value, list: string[]) => [...list, value],
      [],
    )
    .option('--wait', 'follow the run until it finishes, and exit with its outcome')
    .option('--results <dir>', 'with --wait: download JUnit, logs, screenshots and performance data here')
    .option('--junit <file>', 'with --wait: write one JUnit XML file for the whole run')
    .option('--abort-on-interrupt', 'Ctrl-C aborts the run on the server without asking')
    .option('--poll-interval <ms>', 'with --wait: how often to ask for the state', '2000')
    .addHelpText('after', EXAMPLES)
    .action(async (flags: RunFlags) => {
      process.exitCode = await run(flags, out);
    });
}

async function run(flags: RunFlags, out: NodeJS.WriteStream): Promise<number> {
  // Local checks first: nothing is uploaded for a command that cannot work.
  if (flags.app === undefined) throw new CliError('--app FILE is required (the .apk or .ipa to test)');
  const app = checkFile('--app', flags.app);
  const osType = osTypeOfApp(app);
  const tests = flags.tests === undefined ? undefined : checkFile('--tests', flags.tests);
  if (tests !== undefined) checkTests(tests);
  if (flags.crawler === true && tests !== undefined)
    throw new CliError('--crawler needs no --tests: the service explores the app itself');
  if ((flags.group === undefined) === (flags.devices === undefined))
    throw new CliError('Give exactly one of --group NAME|ID and --devices ID,ID');
  if ((flags.results !== undefined || flags.junit !== undefined) && flags.wait !== true)
    throw new CliError('--results and --junit need --wait');
  const parameters = parseParams(flags.param);
  const timeout = parseTimeout(flags.timeout);
  const pollMs = Number(flags.pollInterval);
  if (!Number.isInteger(pollMs) || pollMs < 100)
    throw new CliError(`--poll-interval ${flags.pollInterval}: expected milliseconds, at least 100`);

  const client = createClient(resolveClientSettings(flags));
  // Both lists asked at once: the upload starts a round trip sooner (bench/suites/startup.ts).
  const [frameworks, groups, devices] = await Promise.all([
    client.frameworks(),
    flags.group !== undefined ? client.deviceGroups() : undefined,
    flags.group === undefined ? client.devices() : undefined,
  ]);
  const framework = chooseFramework(frameworks, osType, {
    framework: flags.framework,
    crawler: flags.crawler === true,
    tests,
  });
  const target =
    flags.group !== undefined
      ? { deviceGroupId: chooseGroup(groups!, osType, flags.group).id }
      : { deviceIds: chooseDevices(devices!, osType, flags.devices!) };

  const appFile = await upload(client, app, out, flags.json === true);
  const testFile = tests === undefined ? undefined : await upload(client, tests, out, flags.json === true);
  const config: TestRunConfig = {
    osType,
    frameworkId: framework.id,
    projectName: flags.project ?? path.basename(app, path.extname(app)),
    ...target,
    files: [
      { id: appFile.id, action: 'INSTALL' },
      ...(testFile ? [{ id: testFile.id, action: 'RUN_TEST' as const }] : []),
    ],
    ...(flags.name !== undefined && { testRunName: flags.name }),
    ...(timeout !== undefined && { timeout }),
    ...(parameters.length > 0 && { testRunParameters: parameters }),
  };
  const started = await client.startRun(config);
  const say = (line: string) => flags.json !== true && out.write(`${line}\n`);
  say(
    `Run ${started.id} started in project '${started.projectName}' (${framework.name}) on ${started.deviceCount} device${started.deviceCount === 1 ? '' : 's'}`,
  );
  if (flags.wait !== true) {
    if (flags.json === true) out.write(`${JSON.stringify(started)}\n`);
    else say(`Follow it with: devicecloud runs show ${started.id}`);
    return EXIT.OK;
  }

  const stop = new AbortController();
  const interrupted = onInterrupt(client, started.id, flags.abortOnInterrupt === true, out, stop);
  let finished;
  try {
    finished = await watchRun(client, started.id, {
      pollMs,
      out: flags.json === true ? devNull() : out,
      signal: stop.signal,
    });
  } finally {
    interrupted.dispose();
  }
  // Ctrl-C wins over a finish seen meanwhile: the abort's own answer may come after the poll that
  // saw the run end because of it.
  if (finished === undefined || interrupted.fired()) return interrupted.done();

  // Results (and their XML writer) are loaded once there are some: not before the upload starts.
  const { collectTestCases, downloadResults, failureLines, mergedJUnit } = await import('./run-results.ts');
  const results = await collectTestCases(client, finished.sessions);
  if (flags.results !== undefined) {
    const folders = await downloadResults(client, finished.run, results, flags.results);
    say(`Results of ${folders.length} device run${folders.length === 1 ? '' : 's'} in ${flags.results}`);
  }
  if (flags.junit !== undefined) {
    fs.mkdirSync(path.dirname(path.resolve(flags.junit)), { recursive: true });
    fs.writeFileSync(flags.junit, mergedJUnit(finished.run, results));
    say(`JUnit report: ${flags.junit}`);
  }
  const { run: end } = finished;
  for (const line of failureLines(results)) say(line);
  say(
    `Run ${end.id} finished: ${end.succeededDeviceCount} of ${end.deviceCount} device runs succeeded; ${end.successfulTestCaseCount} tests passed, ${end.failedTestCaseCount} failed`,
  );
  if (flags.json === true) out.write(`${JSON.stringify({ ...end, deviceSessions: finished.sessions })}\n`);
  return exitCodeOf(finished.sessions);
}

async function upload(
  client: DevicecloudClient,
  file: string,
  out: NodeJS.WriteStream,
  quiet: boolean,
): Promise<ApiFile> {
  const size = fs.statSync(file).size;
  const name = path.basename(file);
  const bar = !quiet && process.stderr.isTTY === true;
  let shown = -1;
  const uploaded = await client.upload(file, (sent, total) => {
    const percent = total === 0 ? 100 : Math.floor((sent / total) * 100);
    if (!bar || percent === shown) return;
    shown = percent;
    const width = 30;
    const filled = Math.round((percent / 100) * width);
    process.stderr.write(
      `\r  uploading ${name} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${String(percent).padStart(3)}% of ${bytes(total)}`,
    );
  });
  if (bar) process.stderr.write('\r\x1b[2K');
  if (!quiet)
    out.write(
      `Uploaded ${name} (${bytes(size)}) as file ${uploaded.id}${uploaded.duplicate ? ', a duplicate of an earlier upload' : ''}\n`,
    );
  return uploaded;
}

/**
 * Ctrl-C while waiting: abort the run on the server (at once with --abort-on-interrupt, after
 * asking on a terminal), or leave it running and say how to stop it.
 */
function onInterrupt(
  client: DevicecloudClient,
  runId: number,
  abortAlways: boolean,
  out: NodeJS.WriteStream,
  stop: AbortController,
) {
  let code: number = EXIT.INTERRUPTED;
  let handled: Promise<void> | undefined;
  const handler = () => {
    process.removeListener('SIGINT', handler);
    handled = (async () => {
      let abort = abortAlways;
      if (!abort && process.stdin.isTTY === true) {
        const prompt = readline.createInterface({ input: process.stdin, output: process.stderr });
        abort = /^y(es)?$/i.test((await prompt.question(`\nAbort run ${runId} on the server? [y/N] `)).trim());
        prompt.close();
      }
      if (abort) {
        await client
          .abortRun(runId)
          .catch((error: Error) => out.write(`could not abort run ${runId}: ${error.message}\n`));
        out.write(`\nRun ${runId} aborted\n`);
      } else {
        out.write(`\nRun ${runId} goes on on the server; stop it with: devicecloud runs abort ${runId}\n`);
      }
      code = EXIT.INTERRUPTED;
      stop.abort();
    })();
  };
  process.on('SIGINT', handler);
  return {
    dispose: () => process.removeListener('SIGINT', handler),
    fired: () => handled !== undefined,
    /** The exit code, once the interruption has been dealt with (the abort answered, said so). */
    done: async () => {
      await handled;
      return code;
    },
  };
}

function devNull(): NodeJS.WriteStream {
  return { write: () => true, isTTY: false } as unknown as NodeJS.WriteStream;
}
