/**
 * The CLI as CI uses it: `devicecloud run` and the list commands as subprocesses against a real
 * `devicecloud local` (server plus an agent with virtual devices), talking only HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_START_MS, type RunningProcess, cliBudget, runCli, startCli } from '../support/cli.ts';
import { zip } from '../support/zips.ts';

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');
const app = path.join(EXAMPLES, 'sample-app.apk');
const green = path.join(EXAMPLES, 'tests-green.zip');
const failing = path.join(EXAMPLES, 'tests-failing.zip');

// Each test starts the CLI up to a dozen times, each start bounded by CLI_START_MS (a command that
// waits for a run, by a few of them): on a loaded machine that is minutes, so the tests' own
// timeout is only a backstop.
describe('devicecloud run and the client commands, against a local cloud', { timeout: 15 * 60_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-cli-'));
  let local: RunningProcess;
  let env: Record<string, string>;
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli(args, { ...env, ...extra }, args.includes('--wait') ? 5 * CLI_START_MS : CLI_START_MS);

  beforeAll(async () => {
    local = startCli(['local', '--port', '0', '--data-dir', path.join(dir, 'cloud')]);
    const [, url] = await local.waitFor(/running at (http:\/\/\S+)/);
    const [, key] = await local.waitFor(/API key\s+([A-Za-z0-9]{32})/);
    // XDG_CONFIG_HOME keeps `devicecloud login` away from the real home folder.
    env = { DEVICECLOUD_URL: url!, DEVICECLOUD_API_KEY: key!, XDG_CONFIG_HOME: path.join(dir, 'config') };
  }, cliBudget(1));
  afterAll(async () => {
    await local?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs the green example to the end: exit 0, plain progress lines, results and one merged JUnit file', async () => {
    const results = path.join(dir, 'green-results');
    const junit = path.join(dir, 'green-junit.xml');
    const answer = await cli([
      'run',
      '--app',
      app,
      '--tests',
      green,
      '--group',
      'All Android devices',
      '--wait',
      '--results',
      results,
      '--junit',
      junit,
      '--poll-interval',
      '300',
    ]);
    expect(answer.code, answer.stderr).toBe(0);
    expect(answer.stdout).toMatch(/^Uploaded sample-app\.apk \(1\.0 KiB\) as file \d+$/m);
    expect(answer.stdout).toMatch(
      /^Run \d+ started in project 'sample-app' \(Appium Android server side\) on 4 devices$/m,
    );
    expect(answer.stdout).toMatch(/^\[\d\d:\d\d:\d\d\] Google Pixel 8: SUCCEEDED, 4 passed, 0 failed$/m);
    expect(answer.stdout).toMatch(/Run \d+ finished: 4 of 4 device runs succeeded; 16 tests passed, 0 failed/);
    expect(answer.stdout).not.toContain('\x1b['); // not a terminal: no cursor movement

    const folders = fs.readdirSync(results).filter((name) => name !== 'run.json');
    expect(folders).toHaveLength(4);
    const pixel = path.join(
      results,
      folders.find((name) => name.endsWith('Google-Pixel-8'))!,
    );
    expect(fs.readdirSync(pixel).sort()).toEqual(['junit.xml', 'performance.json', 'screenshots', 'test.log']);
    expect(fs.readdirSync(path.join(pixel, 'screenshots')).sort()).toEqual(['01-home.png', '02-checkout.png']);
    expect(
      fs
        .readFileSync(path.join(pixel, 'screenshots', '01-home.png'))
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(JSON.parse(fs.readFileSync(path.join(pixel, 'performance.json'), 'utf8')).length).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(pixel, 'test.log'), 'utf8')).toContain('4 tests passed');

    const merged = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: '',
      isArray: (name) => name === 'testsuite',
    }).parse(fs.readFileSync(junit, 'utf8')).testsuites;
    expect(merged).toMatchObject({ tests: '16', failures: '0' });
    expect(merged.testsuite.map((suite: { name: string }) => suite.name).sort()).toEqual([
      'Google Pixel 6a',
      'Google Pixel 8',
      'OnePlus Nord 2',
      'Samsung Galaxy S24',
    ]);
  });

  it('exits 1 on the failing example, naming the failing test', async () => {
    const answer = await cli([
      'run',
      '--app',
      app,
      '--tests',
      failing,
      '--devices',
      await firstAndroidDevice(),
      '--wait',
      '--poll-interval',
      '300',
    ]);
    expect(answer.code, answer.stderr).toBe(1);
    expect(answer.stdout).toMatch(
      /^FAILED com\.devicecloud\.sample\.CheckoutTest#testPayWithExpiredCard on .+: Expected the payment to be declined, but it was accepted$/m,
    );
  });

  it('runs the seed crawler recipe on iOS devices with --crawler', async () => {
    const answer = await cli([
      'run',
      '--crawler',
      '--app',
      path.join(EXAMPLES, 'sample-app.ipa'),
      '--group',
      'All iOS devices',
      '--wait',
      '--poll-interval',
      '300',
      '--json',
    ]);
    expect(answer.code, answer.stderr).toBe(0);
    const run = JSON.parse(answer.stdout);
    expect(run).toMatchObject({
      state: 'FINISHED',
      frameworkName: 'iOS Crawler',
      deviceCount: 2,
      succeededDeviceCount: 2,
    });
    expect(run.deviceSessions.map((session: { testCasePassedCount: number }) => session.testCasePassedCount)).toEqual([
      3, 3,
    ]);
  });

  it('starts without waiting, and the list commands show the run in tables and JSON', async () => {
    const started = await cli([
      'run',
      '--app',
      app,
      '--tests',
      green,
      '--group',
      '1',
      '--project',
      'Nightly',
      '--name',
      'from CI',
      '--param',
      'ENV=staging',
      '--json',
    ]);
    expect(started.code, started.stderr).toBe(0);
    const run = JSON.parse(started.stdout);
    expect(run).toMatchObject({ projectName: 'Nightly', displayName: 'from CI', deviceCount: 4 });

    const shown = await cli(['runs', 'show', String(run.id), '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: run.id, deviceSessions: expect.any(Array) });
    const listed = await cli(['runs', 'list']);
    expect(listed.stdout.split('\n')[0]).toMatch(/^id\s+project\s+name\s+state/);
    expect(listed.stdout).toMatch(new RegExp(`^${run.id}\\s+Nightly\\s+from CI`, 'm'));
    for (const command of ['devices', 'groups', 'frameworks', 'projects', 'files', 'me']) {
      const answer = await cli([command, '--json']);
      expect(answer.code, `${command}: ${answer.stderr}`).toBe(0);
      expect(JSON.parse(answer.stdout), command).toBeTruthy();
    }
    expect(
      JSON.parse((await cli(['projects', '--json'])).stdout).map((project: { name: string }) => project.name),
    ).toContain('Nightly');
  });

  it('on Ctrl-C with --abort-on-interrupt aborts the run on the server and exits 130', async () => {
    const slow = path.join(dir, 'slow.zip');
    fs.writeFileSync(slow, await zip([['run-tests.sh', 'sleep 60\n', 0o100755]]));
    const running = startCli(
      [
        'run',
        '--app',
        app,
        '--tests',
        slow,
        '--devices',
        await firstAndroidDevice(),
        '--wait',
        '--abort-on-interrupt',
        '--poll-interval',
        '300',
      ],
      env,
    );
    const [, id] = await running.waitFor(/Run (\d+) started/);
    await running.waitFor(/RUNNING \(RUNNING\)/);
    running.child.kill('SIGINT');
    const code = await new Promise((resolve) => running.child.once('exit', resolve));
    expect(code).toBe(130);
    expect(running.output()).toContain(`Run ${id} aborted`);
    const shown = JSON.parse((await cli(['runs', 'show', id!, '--json'])).stdout);
    expect(shown.deviceSessions[0].state).toBe('ABORTED');
  });

  it('saves credentials with devicecloud login, readable by the user only', async () => {
    const { DEVICECLOUD_URL: url, DEVICECLOUD_API_KEY: key } = env;
    const bare = { DEVICECLOUD_URL: '', DEVICECLOUD_API_KEY: '' };
    const login = await runCli(['login', '--server', url!, '--api-key', key!], {
      XDG_CONFIG_HOME: env.XDG_CONFIG_HOME!,
      ...bare,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain('as demo@devicecloud.local');
    const file = path.join(env.XDG_CONFIG_HOME!, 'devicecloud', 'credentials.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const me = await runCli(['me', '--json'], { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME!, ...bare });
    expect(JSON.parse(me.stdout)).toMatchObject({ email: 'demo@devicecloud.local' });
    const refused = await runCli(['login', '--server', url!, '--api-key', 'x'.repeat(32)], {
      XDG_CONFIG_HOME: path.join(dir, 'other-config'),
      ...bare,
    });
    expect(refused.code).toBe(3);
    expect(fs.existsSync(path.join(dir, 'other-config', 'devicecloud', 'credentials.json'))).toBe(false);
  });

  it('answers bad usage with one line and the right exit code, and no stack trace', async () => {
    const cases: Array<[string[], Record<string, string>, number, RegExp]> = [
      [
        ['run', '--app', path.join(dir, 'missing.apk'), '--tests', green, '--group', '1'],
        {},
        3,
        /--app .*missing\.apk: no such file/,
      ],
      [['run', '--app', green, '--group', '1'], {}, 3, /an app is an \.apk \(Android\) or \.ipa \(iOS\) file/],
      [
        ['run', '--app', app, '--tests', path.join(EXAMPLES, 'sample-app.ipa'), '--group', '1', '--framework', '4'],
        {},
        3,
        /File \d+ \(sample-app\.ipa\) is not a test file/,
      ],
      [
        ['run', '--app', app, '--tests', green, '--group', 'Androids'],
        {},
        3,
        /--group Androids: no ANDROID device group of that id or name; did you mean: 'All Android devices'\?/,
      ],
      [['run', '--app', app, '--tests', green], {}, 3, /Give exactly one of --group/],
      [
        ['run', '--app', app, '--tests', green, '--group', '1', '--framework', 'Robotium'],
        {},
        3,
        /--framework Robotium: no ANDROID framework/,
      ],
      [
        ['run', '--app', app, '--tests', green, '--group', '1', '--param', 'novalue'],
        {},
        3,
        /--param novalue: expected KEY=VALUE/,
      ],
      [['devices'], { DEVICECLOUD_API_KEY: 'x'.repeat(32) }, 3, /the server refused the API key \(401\)/],
      [['runs', 'show', '999999'], {}, 3, /Test run with id '999999' not found \(404\)/],
      [['groups'], { DEVICECLOUD_URL: 'http://127.0.0.1:9' }, 2, /cannot reach devicecloud at http:\/\/127\.0\.0\.1:9/],
      [
        ['groups'],
        { DEVICECLOUD_URL: '', XDG_CONFIG_HOME: path.join(dir, 'nothing') },
        3,
        /No server given: use --server URL/,
      ],
      [['run', '--wat'], {}, 3, /unknown option '--wat'/],
    ];
    for (const [args, extra, code, message] of cases) {
      const answer = await cli(args, extra);
      expect(answer.code, `${args.join(' ')}: ${answer.stderr}`).toBe(code);
      expect(answer.stderr, args.join(' ')).toMatch(message);
      expect(answer.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  it('explains every command with examples in --help', async () => {
    for (const command of [['run'], ['runs', 'list'], ['devices'], ['login'], []]) {
      const answer = await cli([...command, '--help']);
      expect(answer.code, command.join(' ')).toBe(0);
      expect(answer.stdout, command.join(' ')).toContain('Examples:');
    }
  });

  async function firstAndroidDevice(): Promise<string> {
    const devices = JSON.parse((await cli(['devices', '--json'])).stdout) as Array<{ id: number; osType: string }>;
    return String(devices.filter((device) => device.osType === 'ANDROID').sort((a, b) => a.id - b.id)[0]!.id);
  }
});
