/**
 * The sandbox of customer code, played as the attacker would, on the virtual driver: a test
 * package trying to reach the agent's token, data and network, to leave processes behind, to
 * write outside its folder, or to exhaust the host; and an honest package on the same driver that
 * still runs. Needs bubblewrap (Debian package `bubblewrap`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver, Job, LocalFile } from '../../src/agent/driver.ts';
import { type SandboxLimits, noSandbox } from '../../src/agent/drivers/host/sandbox.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { decide } from '../../src/agent/executor.ts';
import { processesWith, testSandbox } from '../support/sandbox.ts';
import { zip } from '../support/zips.ts';
import { recorder } from './conformance.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-sandbox-'));
const SECRET = 'dca_sandbox_secret_0123456789abcdef';
let listener: net.Server;
let port: number;
let holder: ChildProcess;

beforeAll(async () => {
  // Stand for the agent: a process with its token in its environment, a service on the host's loopback.
  holder = spawn('sleep', ['600'], {
    env: { PATH: process.env.PATH, DEVICECLOUD_AGENT_TOKEN: SECRET },
    stdio: 'ignore',
  });
  listener = net.createServer((socket) => socket.end('hello from the host\n'));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as net.AddressInfo).port;
});
afterAll(async () => {
  holder.kill('SIGKILL');
  await new Promise((resolve) => listener.close(resolve));
  fs.rmSync(root, { recursive: true, force: true });
});

const junit = `cat > "$OUTPUT_DIR/junit.xml" <<XML
<testsuite name="s"><testcase classname="c" name="honest"/></testsuite>
XML
`;

function harness(name: string, sandboxOf: (dataDir: string) => ReturnType<typeof testSandbox>) {
  const dataDir = fs.mkdtempSync(path.join(root, `${name}-`));
  const driver: Driver = createVirtualDriver({
    dataDir,
    devices: defaultVirtualDevices(1, 0),
    sandbox: sandboxOf(dataDir),
  });
  let jobs = 0;
  const run = async (script: string, parameters: Record<string, string> = {}) => {
    jobs += 1;
    const file = path.join(dataDir, `package-${jobs}.zip`);
    fs.writeFileSync(file, await zip([['run-tests.sh', script, 0o100755]]));
    const tests: LocalFile = { path: file, name: 'tests.zip', properties: {} };
    const workDir = path.join(dataDir, 'work', String(jobs), 'run');
    fs.mkdirSync(workDir, { recursive: true });
    const job: Job = {
      deviceRunId: jobs,
      serial: 'virtual-android-1',
      kind: 'server-side',
      app: null,
      tests,
      data: [],
      parameters,
      timeoutSeconds: 60,
      locale: 'en_US',
      deviceSettings: null,
      launchApp: true,
      credentials: null,
      workDir,
    };
    const result = await driver.execute(job, recorder().context);
    await driver.clean('virtual-android-1');
    const output = (artifact: string) =>
      fs.readFileSync(result.artifacts.find((candidate) => candidate.name === artifact)!.path, 'utf8');
    return { result, output, log: output('test.log') };
  };
  return { dataDir, driver, run };
}

describe('the bubblewrap sandbox against a hostile test package (public flavour: no network)', () => {
  const { dataDir, driver, run } = harness('public', (dir) => testSandbox(dir));
  afterAll(() => driver.close());

  it('runs an honest package with its results', async () => {
    const { result } = await run(`${junit}echo ok`);
    expect(result.outcome).toBe('COMPLETED');
    expect(result.exitCode).toBe(0);
    expect(result.artifacts.map((artifact) => artifact.kind)).toContain('junit');
  });

  it('runs the script as a uid of its own, without capabilities, in a PID namespace of its own', async () => {
    const { log } = await run('id -u; grep CapEff /proc/self/status; ls /proc | grep -c "^[0-9]"; echo "pid $$"');
    const [uid] = log.split('\n');
    expect(Number(uid)).not.toBe(0);
    expect(Number(uid)).not.toBe(process.getuid!());
    expect(log).toContain('CapEff:\t0000000000000000');
    // bwrap, bash, ls and grep: nothing of the host.
    expect(Number(log.split('\n')[2])).toBeLessThan(6);
  });

  it("finds the agent's token in no environment it can read", async () => {
    const { log } = await run(
      `env; for f in /proc/[0-9]*/environ; do cat "$f" 2>/dev/null | tr '\\0' '\\n'; done; echo end`,
    );
    expect(log).toContain('end');
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('DEVICECLOUD_');
  });

  it("cannot read the agent's data, nor write outside its folder (host /tmp unchanged)", async () => {
    const secretFile = path.join(dataDir, 'cache', 'victim-input');
    fs.mkdirSync(path.dirname(secretFile), { recursive: true });
    fs.writeFileSync(secretFile, 'the input of another user');
    const marker = `sandbox-tmp-${process.pid}-${Date.now()}`;
    const { log } = await run(
      `cat "$VICTIM" && echo READ-VICTIM
echo poisoned > "$VICTIM" && echo WROTE-VICTIM
echo x > "/tmp/${marker}" && echo "private tmp ok"
echo x > "${os.tmpdir()}/${marker}-2" 2>/dev/null
ls /root /home 2>&1; cat /etc/shadow 2>&1
echo x > /usr/${marker} || echo "usr read-only"
echo x > /dev/shm/${marker} && echo "shm ok"
echo end`,
      { VICTIM: secretFile },
    );
    expect(log).toContain('end');
    expect(log).not.toContain('READ-VICTIM');
    expect(log).not.toContain('WROTE-VICTIM');
    expect(log).toContain('private tmp ok');
    expect(log).toContain('usr read-only');
    expect(log).toContain('shm ok');
    expect(fs.existsSync(`/dev/shm/${marker}`)).toBe(false);
    expect(fs.readFileSync(secretFile, 'utf8')).toBe('the input of another user');
    expect(fs.existsSync(path.join(os.tmpdir(), marker))).toBe(false);
    expect(fs.existsSync(path.join(os.tmpdir(), `${marker}-2`))).toBe(false);
    expect(fs.existsSync('/etc/shadow') && log.includes(fs.readFileSync('/etc/shadow', 'utf8').slice(0, 20))).toBe(
      false,
    );
  });

  it('cannot hard-link a host file into its output to have it uploaded', async () => {
    const hostFile = path.join(dataDir, 'devicecloud.db');
    fs.writeFileSync(hostFile, 'SQLite format 3 secret keys');
    const { result, log } = await run(
      `ln "${hostFile}" "$OUTPUT_DIR/db.xml" && echo LINKED; ln /etc/passwd "$OUTPUT_DIR/passwd" && echo LINKED2; ln -s "${hostFile}" "$OUTPUT_DIR/db2.xml"; echo end`,
    );
    expect(log).toContain('end');
    expect(log).not.toContain('LINKED');
    for (const artifact of result.artifacts)
      expect(fs.readFileSync(artifact.path, 'utf8')).not.toContain('secret keys');
    expect(result.artifacts.map((artifact) => artifact.name)).not.toContain('db2.xml');
  });

  it("cannot reach the host's own services on its loopback", async () => {
    const { log } = await run(`(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) 2>&1; echo end`);
    expect(log).toContain('end');
    expect(log).not.toContain('hello from the host');
  });

  it('leaves nothing running: setsid daemons and double forks end with the run', async () => {
    const marker = `daemon-${process.pid}-${Date.now()}`;
    const { log } = await run(`setsid bash -c 'while :; do sleep 0.2; done' ${marker}-a > /dev/null 2>&1 < /dev/null &
( ( nohup bash -c 'while :; do sleep 0.2; done' ${marker}-b > /dev/null 2>&1 & ) & )
for i in $(seq 100); do [ "$(pgrep -fc '${marker}')" -ge 2 ] && break; sleep 0.05; done; echo "daemons $(pgrep -fc '${marker}')"`);
    // Both daemons were running when the script ended (else their absence would prove nothing)...
    expect(log).toMatch(/daemons [2-9]/);
    // ...and none outlived the run.
    expect(processesWith(marker)).toEqual([]);
  });
});

describe('the sandbox on a private cloud (network host): the same isolation but the host network', () => {
  const { driver, run } = harness('private', (dir) => testSandbox(dir, { network: 'host' }));
  afterAll(() => driver.close());

  it('reaches the host loopback (which shows the public test above can fail), still without the token', async () => {
    const { log } = await run(
      `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) 2>&1; for f in /proc/[0-9]*/environ; do cat "$f" 2>/dev/null; done; echo end`,
    );
    expect(log).toContain('hello from the host');
    expect(log).not.toContain(SECRET);
  });
});

describe('without a sandbox (--sandbox none, development only) the same attacks succeed', () => {
  const { driver, run } = harness('none', () => noSandbox());
  afterAll(() => driver.close());

  it("reads the agent's token, its data and the host loopback", async () => {
    const victim = path.join(root, 'victim.txt');
    fs.writeFileSync(victim, 'the input of another user');
    const { log } = await run(
      `cat /proc/${holder.pid}/environ | tr '\\0' '\\n' | grep DEVICECLOUD_AGENT_TOKEN; cat ${victim}; (exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3); echo end`,
    );
    expect(log).toContain(SECRET);
    expect(log).toContain('the input of another user');
    expect(log).toContain('hello from the host');
  });

  it('still ends what the script left running in its session when it exits', async () => {
    const marker = `leftover-${process.pid}-${Date.now()}`;
    const { log } = await run(`bash -c 'while :; do sleep 0.2; done' ${marker} > /dev/null 2>&1 < /dev/null &
for i in $(seq 100); do [ "$(pgrep -fc '${marker}')" -ge 1 ] && break; sleep 0.05; done; echo "left $(pgrep -fc '${marker}')"`);
    expect(log).toMatch(/left [1-9]/);
    expect(processesWith(marker)).toEqual([]);
  });
});

describe('limits: each breach ends the run with a message naming the limit, and counts as FAILED', () => {
  const loose: SandboxLimits = { memoryMb: 512, processes: 64, cpuSeconds: 60, diskMb: 64 };
  const cases: Array<[keyof SandboxLimits, number, string, RegExp]> = [
    // tail keeps the last 48 MiB of an endless stream: over the limit, under the per-process backstop (4 times it).
    ['memoryMb', 32, 'cat /dev/zero | tail -c 48M', /more than 32 MiB of memory \(the sandbox's memory limit\)/],
    [
      'processes',
      12,
      'for i in $(seq 1 60); do sleep 30 & done; wait',
      /more than 12 processes at once \(the sandbox's process limit\)/,
    ],
    ['cpuSeconds', 1, 'while :; do :; done', /more than 1 s of CPU time \(the sandbox's CPU time limit\)/],
    [
      'diskMb',
      8,
      'for i in 1 2 3 4; do head -c 6M /dev/zero > "$OUTPUT_DIR/f$i"; done; sleep 30',
      /more than 8 MiB into their folder \(the sandbox's disk limit\)/,
    ],
  ];
  it('counts a swarm of empty files against the disk limit (every entry takes a block), not as free', async () => {
    const { driver, run } = harness('limit-entries', (dir) => testSandbox(dir, { limits: { ...loose, diskMb: 8 } }));
    try {
      // 4,000 empty files: no byte of data, 16 MiB of entries at a block each; the walk that counts
      // them runs on the agent's event loop and stops once the limit is passed.
      const { result } = await run(
        `${junit}mkdir -p "$OUTPUT_DIR/many" && cd "$OUTPUT_DIR/many" && seq 4000 | xargs touch && sleep 30`,
      );
      expect(result).toMatchObject({
        outcome: 'CUSTOMER_FAULT',
        failReason: expect.stringMatching(/more than 8 MiB into their folder/),
      });
    } finally {
      await driver.close();
    }
  });

  for (const [limit, value, script, message] of cases) {
    it(`stops a run over its ${limit} limit, then runs an honest package`, async () => {
      const { driver, run } = harness(`limit-${limit}`, (dir) =>
        testSandbox(dir, { limits: { ...loose, [limit]: value } }),
      );
      try {
        const started = Date.now();
        const { result, log } = await run(`${junit}${script}`);
        expect(Date.now() - started).toBeLessThan(20_000);
        expect(result).toMatchObject({ outcome: 'CUSTOMER_FAULT', failReason: expect.stringMatching(message) });
        expect(log).toMatch(message);
        const report = decide(
          result,
          { cases: [{ className: 'c', methodName: 'honest', result: 'PASSED' } as never], problem: null },
          null,
        );
        // FAILED, and not the device's doing: it counts neither for nor against the device.
        expect(report).toMatchObject({ outcome: 'FAILED', failReason: expect.stringMatching(message), refused: true });
        const honest = await run(`${junit}echo fine`);
        expect(honest.result).toMatchObject({ outcome: 'COMPLETED', exitCode: 0, failReason: null });
      } finally {
        await driver.close();
      }
    });
  }
});

describe('a sandbox that cannot start the tests', () => {
  // The host's problem (no free uid, a folder it cannot prepare, bwrap gone), not the package's:
  // the run must not end as the customer's failing tests.
  const { run } = harness('broken', (dir) => ({
    ...testSandbox(dir),
    spawn: () => {
      throw new Error('no free sandbox uid (1000 runs at once)');
    },
  }));

  it('ends the device run as an infrastructure error, saying why', async () => {
    const { result, log } = await run(junit);
    expect(result).toMatchObject({
      outcome: 'INFRA_ERROR',
      failReason: 'the sandbox could not start the tests: no free sandbox uid (1000 runs at once)',
    });
    expect(log).toContain('[could not start the tests: no free sandbox uid');
  });
});
