/**
 * The adb driver running server-side scripts: their environment, their one phone through the run's
 * ADB endpoint, and stopping them.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processesWith, testSandbox } from '../support/sandbox.ts';
import { zip } from '../support/zips.ts';
import { recorder } from './conformance.ts';
import { root, app, driverFor, adbBench, PIXEL, MOTO, adbFiles } from './adb-world.ts';

adbFiles();

describe('adb driver', () => {
  const { bench, job, until } = adbBench();

  it("runs server-side packages with the phone's serial and its ADB endpoint in the environment", async () => {
    // The script speaks the ADB protocol itself (bash's /dev/tcp), as adb or Appium would.
    const script = `set -e
exec 3<>/dev/tcp/$ANDROID_ADB_SERVER_ADDRESS/$ANDROID_ADB_SERVER_PORT
req() { printf '%04x%s' "\${#1}" "$1" >&3; }
req "host:transport:$ANDROID_SERIAL"; head -c 4 <&3 > /dev/null
req "shell:getprop ro.product.model"; head -c 4 <&3 > /dev/null
model=$(cat <&3 | tr -d '\\n')
env | sort > "$OUTPUT_DIR/env.txt"
cat > "$OUTPUT_DIR/junit.xml" <<XML
<testsuite name="s"><testcase classname="c" name="model $model"/></testsuite>
XML
`;
    const tests = path.join(root, 'server-side.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', script, 0o100755]]));
    process.env.DEVICECLOUD_AGENT_TOKEN = 'dca_never_leaks_0000';
    let result;
    try {
      result = await bench.driver.execute(
        job({
          kind: 'server-side',
          app,
          tests: { path: tests, name: 'server-side.zip', properties: {} },
          parameters: { BASE_URL: 'https://staging', ANDROID_SERIAL: 'other' },
        }),
        recorder().context,
      );
    } finally {
      delete process.env.DEVICECLOUD_AGENT_TOKEN;
    }
    expect(result.outcome, result.failReason ?? '').toBe('COMPLETED');
    expect(result.exitCode).toBe(0);
    const junit = fs.readFileSync(result.artifacts.find((artifact) => artifact.kind === 'junit')!.path, 'utf8');
    expect(junit).toContain('name="model Pixel 7"');
    const env = fs.readFileSync(result.artifacts.find((artifact) => artifact.name === 'env.txt')!.path, 'utf8');
    for (const line of [
      `ANDROID_SERIAL=${PIXEL}`,
      `ADB_SERVER_SOCKET=localfilesystem:${path.join(bench.dataDir, 'work', String(bench.jobs), 'box', 'adb.sock')}`,
      'ANDROID_ADB_SERVER_ADDRESS=127.0.0.1',
      'APP_PACKAGE=com.devicecloud.sample',
      'APP_ACTIVITY=com.devicecloud.sample.MainActivity',
      'DEVICE_API_LEVEL=34',
      'BASE_URL=https://staging',
    ])
      expect(env).toContain(line);
    // The host's ADB server, which reaches every phone, is named nowhere: only the run's endpoint is.
    expect(env).not.toContain(String(bench.fake.port));
    expect(env).not.toContain('ANDROID_SERIAL=other');
    expect(env).not.toContain('dca_never_leaks');
    expect(result.artifacts.map((artifact) => artifact.name)).toEqual(
      expect.arrayContaining(['test.log', 'logcat.txt', '01-final.png']),
    );
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });

  it("gives a server-side script its own phone only: the other phone, the server's stop and garbage are refused, its own phone still answers", async () => {
    // The script plays the attacker through its endpoint's port (bash's /dev/tcp) and, where the
    // host has adb, through ADB_SERVER_SOCKET as the adb command line finds it.
    const script = `
ask() { exec 3<>/dev/tcp/127.0.0.1/$ANDROID_ADB_SERVER_PORT; printf '%04x%s' "\${#1}" "$1" >&3; cat <&3; exec 3<&-; }
{ ask host:devices; echo; ask "host:transport:$OTHER"; echo; ask host:kill; echo; } > "$OUTPUT_DIR/wire.txt"
exec 3<>/dev/tcp/127.0.0.1/$ANDROID_ADB_SERVER_PORT; printf 'zz%%garbage' >&3; head -c 1 <&3 > /dev/null; exec 3<&-
if command -v adb > /dev/null; then
  { adb devices; adb -s "$OTHER" shell getprop ro.product.model 2>&1; adb shell getprop ro.product.model; adb kill-server; adb -s "$ANDROID_SERIAL" get-state; } > "$OUTPUT_DIR/adb.txt" 2>&1
fi
`;
    const tests = path.join(root, 'one-device.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', script, 0o100755]]));
    const moto = bench.fake.device(MOTO).commands.length;
    const result = await bench.driver.execute(
      job({
        kind: 'server-side',
        app,
        tests: { path: tests, name: 'one-device.zip', properties: {} },
        parameters: { OTHER: MOTO },
      }),
      recorder().context,
    );
    expect(result.outcome, result.failReason ?? '').toBe('COMPLETED');
    const output = (name: string) =>
      fs.readFileSync(result.artifacts.find((artifact) => artifact.name === name)!.path, 'utf8');
    const hex = (text: string) => `${text.length.toString(16).padStart(4, '0')}${text}`;
    const refused = `device '${MOTO}' is not this run's device: this ADB endpoint serves ${PIXEL} only`;
    expect(output('wire.txt')).toBe(
      `OKAY${hex(`${PIXEL}\tdevice\n`)}\nFAIL${hex(refused)}\nFAIL${hex('the ADB server is shared by every phone on this host: a run may not stop it')}\n`,
    );
    if (fs.existsSync('/usr/bin/adb')) {
      expect(output('adb.txt')).toBe(
        `List of devices attached\n${PIXEL}\tdevice\n\nerror: ${refused}\nPixel 7\ndevice\n`,
      );
    }
    expect(bench.fake.device(MOTO).commands).toHaveLength(moto);
    expect(bench.fake.killed).toBe(false);
    // The endpoint went with the run.
    expect(fs.existsSync(path.join(bench.dataDir, 'work', String(bench.jobs), 'box', 'adb.sock'))).toBe(false);
    expect((await bench.driver.health(PIXEL)).ok).toBe(true);
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });

  it("gives a script on the public flavour (sandbox without network) no path to the host's loopback, and its own phone through the run's socket and its relay", async () => {
    // Inside: the endpoint over TCP as Appium and adbkit reach it (the relay's 127.0.0.1:$ANDROID_ADB_SERVER_PORT),
    // the host's ADB server and another service of the host's loopback, adb through the socket, then a forward to
    // the phone's UiAutomator2 server, reached on the sandbox's own loopback.
    const script = `ask() { exec 3<>/dev/tcp/127.0.0.1/$ANDROID_ADB_SERVER_PORT; printf '%04x%s' "\${#1}" "$1" >&3; cat <&3; exec 3<&-; }
{ ask host:devices; echo; ask "host:transport:$OTHER"; echo; } > "$OUTPUT_DIR/wire.txt"
for port in $HOST_ADB $HOST_OTHER; do (exec 3<>/dev/tcp/127.0.0.1/$port && echo "REACHED $port"); done > "$OUTPUT_DIR/host.txt" 2>&1
echo "socket $ADB_SERVER_SOCKET"
if command -v adb > /dev/null; then
  { adb devices; adb -P "$ANDROID_ADB_SERVER_PORT" -s "$OTHER" get-state; adb -P "$ANDROID_ADB_SERVER_PORT" forward tcp:8200 tcp:6790; adb forward --list; } > "$OUTPUT_DIR/adb.txt" 2>&1
else
  ask 'host:forward:tcp:8200;tcp:6790' > "$OUTPUT_DIR/adb.txt"
fi
exec 4<>/dev/tcp/127.0.0.1/8200 && printf 'GET /status' >&4 && cat <&4 > "$OUTPUT_DIR/service.txt"
adb_remove() { if command -v adb > /dev/null; then adb forward --remove tcp:8200; else ask 'host:killforward:tcp:8200' > /dev/null; fi; }
adb_remove && (exec 5<>/dev/tcp/127.0.0.1/8200 && echo "STILL FORWARDED") > "$OUTPUT_DIR/removed.txt" 2>&1
for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done | grep -v '^[^ ]*bwrap ' | grep -c '[s]andbox-relay' > "$OUTPUT_DIR/relay.txt"
exit 3
`;
    const tests = path.join(root, 'public-adb.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', script, 0o100755]]));
    const publicDir = fs.mkdtempSync(path.join(root, 'public-'));
    // A small memory limit: its per-process backstop (4 × 128 MiB of address space) is the script's, not the relay's (Node needs more).
    const isolated = driverFor(bench.fake, publicDir, {
      sandbox: testSandbox(publicDir, { network: 'none', limits: { memoryMb: 128 } }),
    });
    // A service of the host's own (its database, say), on the loopback.
    const hostService = net.createServer((socket) => socket.end('host secret'));
    await new Promise<void>((resolve) => hostService.listen(0, '127.0.0.1', resolve));
    bench.fake
      .device(PIXEL)
      .tcpServices.set('tcp:6790', (socket) =>
        socket.once('data', (request) => socket.end(`uiautomator2 of Pixel answers ${request}`)),
      );
    const requests = bench.fake.requests.length;
    try {
      await isolated.listDevices();
      const result = await isolated.execute(
        job({
          kind: 'server-side',
          app,
          tests: { path: tests, name: 'public-adb.zip', properties: {} },
          parameters: {
            OTHER: MOTO,
            HOST_ADB: String(bench.fake.port),
            HOST_OTHER: String((hostService.address() as net.AddressInfo).port),
          },
        }),
        recorder().context,
      );
      const output = (name: string) =>
        fs.readFileSync(result.artifacts.find((artifact) => artifact.name === name)!.path, 'utf8');
      const hex = (text: string) => `${text.length.toString(16).padStart(4, '0')}${text}`;
      const refused = `device '${MOTO}' is not this run's device: this ADB endpoint serves ${PIXEL} only`;
      // The relay ran the script, inside its PID namespace, and handed back its exit code.
      expect(output('relay.txt')).toBe('1\n');
      expect(result.exitCode).toBe(3);
      expect(output('test.log')).toMatch(/socket localfilesystem:\/.*\/box\/adb\.sock/);
      // (a) the endpoint over TCP, inside: its own phone, the other refused.
      expect(output('wire.txt')).toBe(`OKAY${hex(`${PIXEL}\tdevice\n`)}\nFAIL${hex(refused)}\n`);
      // (c) nothing of the host's loopback.
      expect(output('host.txt')).not.toContain('REACHED');
      for (const port of [bench.fake.port, (hostService.address() as net.AddressInfo).port])
        expect(output('host.txt')).toContain(`/dev/tcp/127.0.0.1/${port}: Connection refused`);
      // (b) the forward, made inside the sandbox, reaches the phone's service.
      if (fs.existsSync('/usr/bin/adb'))
        expect(output('adb.txt')).toBe(
          `List of devices attached\n${PIXEL}\tdevice\n\nerror: ${refused}\n8200\n${PIXEL} tcp:8200 tcp:6790\n\n`,
        );
      else expect(output('adb.txt')).toBe(`OKAYOKAY${hex('8200')}`);
      expect(output('service.txt')).toBe('uiautomator2 of Pixel answers GET /status');
      expect(output('removed.txt')).toContain('/dev/tcp/127.0.0.1/8200: Connection refused');
      // (d) the host's ADB server never held the forward; the relay and its control socket went with the run.
      expect(bench.fake.requests.slice(requests).filter((request) => request.includes('forward:'))).toEqual([]);
      expect(bench.fake.forwards.list()).toBe('');
      expect(processesWith(path.join(bench.dataDir, 'work', String(bench.jobs), 'box', 'adb.sock'))).toEqual([]);
      expect(
        fs
          .readdirSync(path.join(bench.dataDir, 'work', String(bench.jobs), 'box'))
          .filter((name) => name.endsWith('.sock')),
      ).toEqual([]);
      expect((await isolated.clean(PIXEL)).ok).toBe(true);
    } finally {
      bench.fake.device(PIXEL).tcpServices.delete('tcp:6790');
      hostService.close();
      await isolated.close();
    }
  });

  it('stops a script running under its relay (public flavour) promptly, the relay with it', async () => {
    const tests = path.join(root, 'endless-public.zip');
    fs.writeFileSync(
      tests,
      await zip([
        ['run-tests.sh', 'trap "" TERM\ntouch "$OUTPUT_DIR/started"\nwhile true; do sleep 0.1; done\n', 0o100755],
      ]),
    );
    const publicDir = fs.mkdtempSync(path.join(root, 'public-'));
    const isolated = driverFor(bench.fake, publicDir, { sandbox: testSandbox(publicDir, { network: 'none' }) });
    const controller = new AbortController();
    try {
      await isolated.listDevices();
      const running = isolated.execute(
        job({ kind: 'server-side', app, tests: { path: tests, name: 'endless-public.zip', properties: {} } }),
        recorder(controller.signal).context,
      );
      await until(
        () => fs.existsSync(path.join(bench.dataDir, 'work', String(bench.jobs), 'box', 'output', 'started')),
        10_000,
      );
      expect(
        processesWith(path.join(bench.dataDir, 'work', String(bench.jobs), 'box', 'adb.sock')).length,
      ).toBeGreaterThan(0);
      const started = Date.now();
      controller.abort();
      const result = await running;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(result.outcome).toBe('STOPPED');
      expect(processesWith(path.join(bench.dataDir, 'work', String(bench.jobs), 'box', 'adb.sock'))).toEqual([]);
      expect((await isolated.clean(PIXEL)).ok).toBe(true);
    } finally {
      await isolated.close();
    }
  });

  it('stops a server-side script and its children promptly', async () => {
    const tests = path.join(root, 'endless.zip');
    fs.writeFileSync(tests, await zip([['run-tests.sh', 'trap "" TERM\nwhile true; do sleep 0.1; done\n', 0o100755]]));
    const controller = new AbortController();
    const running = bench.driver.execute(
      job({ kind: 'server-side', app, tests: { path: tests, name: 'endless.zip', properties: {} } }),
      recorder(controller.signal).context,
    );
    // Stopped once the script runs with children: a `sleep` of this run's (its environment names the run's ADB socket).
    const ofThisRun = path.join(bench.dataDir, 'work', String(bench.jobs), 'box', 'adb.sock');
    const isSleep = (pid: number) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0');
      } catch {
        return false; // gone meanwhile
      }
    };
    await until(() => processesWith(ofThisRun, 'environ').some(isSleep), 20_000);
    const started = Date.now();
    controller.abort();
    const result = await running;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.outcome).toBe('STOPPED');
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });
});
