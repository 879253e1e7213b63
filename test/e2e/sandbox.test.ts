/**
 * A hostile tenant on a public cloud, through real processes (`serve --flavour public` and
 * `agent --flavour public` on one data dir, as `devicecloud local` lays them out): its test package
 * tries each attack of issue 15 that concerns code on the device host, while an honest user's run
 * on the same agent finishes with its own results. Needs bubblewrap. What the script printed comes
 * back as the run's log; what it could have changed is checked on the host.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cloud, type CloudUser, until } from '../support/cloud.ts';
import { cliBudget, runCli } from '../support/cli.ts';
import { processesWith } from '../support/sandbox.ts';
import { zip } from '../support/zips.ts';

const SERVER_SIDE = 4;
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');

/** Each attempt prints PWNED:<what> if it worked. */
const ATTACKS = `
for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$f" 2>/dev/null; done | grep -q '^DEVICECLOUD_AGENT_TOKEN=' && echo PWNED:token-environ
env | grep -q DEVICECLOUD && echo PWNED:env
cat "$TOKEN_FILE" 2>/dev/null | grep -q dca_ && echo PWNED:token-file
head -c 16 "$DB" 2>/dev/null | grep -q SQLite && echo PWNED:sqlite
# The run's own folder lies below the data dir, so the folders leading to it exist; nothing else of it does.
ls -a "$SERVER_DATA" 2>/dev/null | grep -q -e devicecloud.db -e blobs -e token && echo PWNED:server-data
for f in "$CACHE"/*; do [ -f "$f" ] && (echo 'echo evil' > "$f") 2>/dev/null && echo PWNED:cache; done
(echo evil > "$CACHE/planted") 2>/dev/null && echo PWNED:cache-new
(echo evil > "$BLOBS/planted") 2>/dev/null && echo PWNED:blobs
ln "$DB" "$OUTPUT_DIR/db.xml" 2>/dev/null && echo PWNED:hardlink
ln -s "$DB" "$OUTPUT_DIR/db-link.xml" 2>/dev/null
echo "$TAG" > "/tmp/$TAG" && echo private-tmp-written
(exec 3<>/dev/tcp/127.0.0.1/$SERVER_PORT) 2>/dev/null && echo PWNED:server-port
(exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && echo PWNED:postgres
setsid bash -c 'while :; do sleep 0.2; done' "$TAG-daemon" > /dev/null 2>&1 < /dev/null &
( ( nohup bash -c 'while :; do sleep 0.2; done' "$TAG-fork" > /dev/null 2>&1 & ) & )
for i in $(seq 100); do [ "$(pgrep -fc "$TAG-")" -ge 2 ] && break; sleep 0.05; done
echo "daemons $(pgrep -fc "$TAG-")"
echo attempts-done
mkdir -p "$OUTPUT_DIR"
echo '<testsuite name="hostile" tests="1"><testcase classname="h" name="tried"/></testsuite>' > "$OUTPUT_DIR/junit.xml"
`;

const HONEST = `set -eu
mkdir -p "$OUTPUT_DIR"
echo "honest on $DEVICE_NAME"
cat > "$OUTPUT_DIR/junit.xml" <<XML
<testsuite name="honest" tests="2"><testcase classname="h" name="one"/><testcase classname="h" name="two"/></testsuite>
XML
`;

describe('a hostile package on the public flavour (serve + agent, bubblewrap)', () => {
  const cloud = new Cloud(['--flavour', 'public', '--heartbeat-ms', '500']);
  let attacker: CloudUser;
  let honest: CloudUser;
  let android: number[];

  beforeAll(async () => {
    await cloud.startServer();
    await cloud.startAgent('host-1', 3, ['--flavour', 'public']);
    attacker = await cloud.user('mallory@example.com', 'GOLD');
    honest = await cloud.user('alice@example.com', 'GOLD');
    const devices = await honest.api('GET', '/v2/devices?filter=osType_eq_ANDROID&sort=id_a');
    android = devices.body.data.map((device: { id: number }) => device.id);
    expect(android).toHaveLength(2);
  }, cliBudget(5)); // serve, an agent token and the agent, two users
  afterAll(() => cloud.stop(), 60_000);

  async function startRun(user: CloudUser, deviceId: number, script: string, parameters: Record<string, string> = {}) {
    const packagePath = path.join(cloud.dataDir, `${user.email}-${Date.now()}.zip`);
    fs.writeFileSync(packagePath, await zip([['run-tests.sh', script, 0o100755]]));
    const app = await user.upload(path.join(EXAMPLES, 'sample-app.apk'));
    const tests = await user.upload(packagePath);
    const answer = await user.api('POST', '/v2/runs', {
      osType: 'ANDROID',
      frameworkId: SERVER_SIDE,
      projectName: 'sandbox',
      deviceIds: [deviceId],
      files: [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
      ],
      testRunParameters: Object.entries(parameters).map(([key, value]) => ({ key, value })),
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.id as number;
  }
  const finished = (user: CloudUser, id: number) =>
    until(
      () => user.api('GET', `/v2/runs/${id}`).then((answer) => answer.body),
      (body) => body.state === 'FINISHED',
      60_000,
    );
  const session = async (user: CloudUser, id: number) =>
    (await user.api('GET', `/v2/runs/${id}/device-sessions`)).body.data[0];

  it('refuses every attack on the host while an honest run on the same agent finishes with its results', async () => {
    const agentData = path.join(cloud.dataDir, 'host-1', 'agent');
    const cache = path.join(agentData, 'cache');
    // The honest user's inputs are in the agent's cache before the attacker runs.
    const before = await startRun(honest, android[1]!, HONEST);
    await finished(honest, before);
    const cached = fs.readdirSync(cache);
    expect(cached.length).toBeGreaterThan(0);

    const tag = `hostile-${process.pid}-${Date.now()}`;
    const hostile = await startRun(attacker, android[0]!, ATTACKS, {
      TAG: tag,
      TOKEN_FILE: path.join(cloud.dataDir, 'host-1.token'),
      DB: path.join(cloud.dataDir, 'devicecloud.db'),
      SERVER_DATA: cloud.dataDir,
      CACHE: cache,
      BLOBS: path.join(cloud.dataDir, 'blobs'),
      SERVER_PORT: new URL(cloud.url).port,
    });
    const during = await startRun(honest, android[1]!, HONEST);
    const [hostileEnd, honestEnd] = await Promise.all([finished(attacker, hostile), finished(honest, during)]);

    const hostileSession = await session(attacker, hostile);
    const log = await attacker.text(`/v2/device-sessions/${hostileSession.id}/logs`);
    expect(log).toContain('attempts-done');
    // Both daemons ran when the script ended: their absence afterwards is the sandbox's doing.
    expect(log).toMatch(/daemons [2-9]/);
    expect(log).toContain('private-tmp-written');
    expect(log.match(/PWNED:\S+/g) ?? []).toEqual([]);
    expect(hostileEnd).toMatchObject({ succeededDeviceCount: 1 });

    // On the host: nothing written, no link uploaded, nothing left running.
    expect(fs.existsSync(path.join(os.tmpdir(), tag))).toBe(false);
    expect(fs.existsSync('/tmp/' + tag)).toBe(false);
    expect(fs.existsSync(path.join(cloud.dataDir, 'blobs', 'planted'))).toBe(false);
    expect(fs.existsSync(path.join(cache, 'planted'))).toBe(false);
    // The honest inputs the attacker tried to overwrite are there, and whole.
    const inputs = cached.filter((name) => /^[0-9a-f]{64}$/.test(name));
    expect(inputs).not.toEqual([]);
    for (const name of inputs)
      expect(
        createHash('sha256')
          .update(fs.readFileSync(path.join(cache, name)))
          .digest('hex'),
      ).toBe(name);
    const files = await attacker.api('GET', `/v2/device-sessions/${hostileSession.id}/output-file-set/files`);
    expect(files.status).toBe(200);
    expect(JSON.stringify(files.body)).toContain('junit.xml');
    expect(JSON.stringify(files.body)).not.toMatch(/db(-link)?\.xml/);
    expect(processesWith(tag)).toEqual([]);

    // The honest user's runs, before and during, ran with their own results.
    expect(honestEnd).toMatchObject({ succeededDeviceCount: 1, successfulTestCaseCount: 2 });
    const honestLog = await honest.text(`/v2/device-sessions/${(await session(honest, during)).id}/logs`);
    expect(honestLog).toMatch(/^honest on /);
  }, 120_000);

  it('an agent of the public flavour refuses to run customer code unsandboxed, in one line', async () => {
    const refused = await runCli(
      [
        'agent',
        '--server',
        cloud.url,
        '--flavour',
        'public',
        '--sandbox',
        'none',
        '--data-dir',
        path.join(cloud.dataDir, 'refused'),
      ],
      {
        DEVICECLOUD_AGENT_TOKEN: 'dca_aaaaaaaaaaaaaaaaaaaaaaaa',
      },
    );
    expect(refused.code).toBe(3);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/public flavour .* --sandbox none/);
    const network = await runCli(
      [
        'agent',
        '--server',
        cloud.url,
        '--flavour',
        'public',
        '--sandbox-network',
        'host',
        '--data-dir',
        path.join(cloud.dataDir, 'refused'),
      ],
      {
        DEVICECLOUD_AGENT_TOKEN: 'dca_aaaaaaaaaaaaaaaaaaaaaaaa',
      },
    );
    expect(network.code).toBe(3);
    expect(network.stderr).toMatch(/--sandbox-network host/);
  });

  it('an agent set up for another flavour refuses to work for a public cloud, in one line', async () => {
    // An operator forgot DEVICECLOUD_FLAVOUR=public on one host: its sandbox would have the
    // host's network (the private default). The server's hello says what cloud this is.
    const { token } = await cloud.admin(['create-agent-token', '--name', 'misconfigured-host']);
    const refused = await runCli(
      [
        'agent',
        '--server',
        cloud.url,
        '--devices',
        '1',
        '--serial-prefix',
        'misconfigured',
        '--data-dir',
        path.join(cloud.dataDir, 'misconfigured'),
      ],
      {
        DEVICECLOUD_AGENT_TOKEN: token,
        DEVICECLOUD_FLAVOUR: '',
      },
    );
    expect(refused.code).toBe(3);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/public cloud, and this agent was set up for the private flavour/);
  });
});
