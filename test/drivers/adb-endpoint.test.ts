/**
 * A run's ADB endpoint (src/agent/drivers/adb/adb-endpoint.ts) in front of the fake ADB server with
 * two phones attached, played by the run's script as an attacker would: raw protocol requests
 * through the unix socket and the TCP port, adbkit, and (where the Debian `adb` package is
 * installed) the real adb command line with ADB_SERVER_SOCKET. Each attack is first shown to work
 * against the server itself, so that each test would fail without the endpoint.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Adb } from '../../src/agent/drivers/adb/adbkit.ts';
import { type AdbEndpoint, openAdbEndpoint } from '../../src/agent/drivers/adb/adb-endpoint.ts';
import { type Address, AdbWireClient } from '../support/adb-client.ts';
import { testApk } from '../support/fake-adb/apks.ts';
import { FakeAdbServer } from '../support/fake-adb/index.ts';

const PIXEL = '28141FDH2000JY';
const MOTO = 'ZY2242CQ7N';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-adbep-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe("a run's ADB endpoint (fake ADB server, two phones)", () => {
  let fake: FakeAdbServer;
  let endpoint: AdbEndpoint;
  let unix: Address;
  let tcp: Address;
  let direct: Address;
  const refusals: string[] = [];

  beforeEach(async () => {
    fake = await FakeAdbServer.start([{ serial: PIXEL }, { serial: MOTO, model: 'moto-g5' }]);
    direct = { port: fake.port };
    refusals.length = 0;
    endpoint = await openAdbEndpoint({
      serial: PIXEL,
      upstream: { host: '127.0.0.1', port: fake.port },
      socketPath: path.join(fs.mkdtempSync(path.join(root, 'run-')), 'adb.sock'),
      tcp: true,
      log: (message) => refusals.push(message),
    });
    unix = { path: endpoint.socketPath };
    tcp = { port: endpoint.tcpPort! };
  });
  afterEach(async () => {
    await endpoint.close();
    await fake.close();
  });

  it("lists the run's phone alone, on the socket and on the port", async () => {
    expect(await AdbWireClient.ask(direct, 'host:devices')).toBe(`${PIXEL}\tdevice\n${MOTO}\tdevice\n`);
    for (const address of [unix, tcp]) {
      expect(await AdbWireClient.ask(address, 'host:devices')).toBe(`${PIXEL}\tdevice\n`);
      expect(await AdbWireClient.ask(address, 'host:devices-l')).toMatch(
        new RegExp(`^${PIXEL} +device .*model:Pixel_7 .*\n$`),
      );
    }
    expect(endpoint.env()).toEqual({
      ADB_SERVER_SOCKET: `localfilesystem:${endpoint.socketPath}`,
      ANDROID_ADB_SERVER_ADDRESS: '127.0.0.1',
      ANDROID_ADB_SERVER_PORT: String(endpoint.tcpPort),
    });
  });

  it("tells a tracking client of its own phone's changes only", async () => {
    const tracker = await AdbWireClient.connect(unix);
    expect(await tracker.send('host:track-devices').status()).toBe('OKAY');
    expect(await tracker.string()).toBe(`${PIXEL}\tdevice\n`);
    fake.plug({ serial: 'R58M123ABC' });
    fake.setState(MOTO, 'offline');
    fake.setState(PIXEL, 'offline');
    // The next update is the run's phone going offline: the other phones' changes were never sent.
    expect(await tracker.string()).toBe(`${PIXEL}\toffline\n`);
    tracker.close();
  });

  it('runs a shell on its own phone, and "any device" is its own phone', async () => {
    expect(await AdbWireClient.shell(unix, `host:transport:${PIXEL}`, 'getprop ro.product.model')).toBe('Pixel 7\n');
    expect(await AdbWireClient.shell(tcp, `host:tport:serial:${PIXEL}`, 'getprop ro.product.model')).toBe('Pixel 7\n');
    // With two phones attached the server itself refuses "any"; the endpoint has one phone.
    expect(await AdbWireClient.shell(direct, 'host:transport-any', 'echo any')).toEqual({
      fail: 'more than one device/emulator',
    });
    for (const bind of ['host:transport-any', 'host:transport-usb', 'host:tport:any']) {
      expect(await AdbWireClient.shell(unix, bind, `echo ${bind}`)).toBe(`${bind}\n`);
      expect(fake.device(PIXEL).commands).toContain(`echo ${bind}`);
    }
    expect(fake.device(MOTO).commands.filter((command) => command.startsWith('echo'))).toEqual([]);
    expect(await AdbWireClient.ask(unix, 'host:features')).toBe('');
  });

  it('refuses every other phone, however it is named', async () => {
    expect(await AdbWireClient.shell(direct, `host:transport:${MOTO}`, 'getprop ro.product.model')).toBe(
      'Moto G (5)\n',
    );
    const sent = fake.device(MOTO).commands.length;
    const refused = `device '${MOTO}' is not this run's device: this ADB endpoint serves ${PIXEL} only`;
    for (const address of [unix, tcp]) {
      expect(await AdbWireClient.shell(address, `host:transport:${MOTO}`, 'getprop ro.product.model')).toEqual({
        fail: refused,
      });
      expect(await AdbWireClient.shell(address, `host:tport:serial:${MOTO}`, 'getprop ro.product.model')).toEqual({
        fail: refused,
      });
      expect(await AdbWireClient.ask(address, `host-serial:${MOTO}:get-state`)).toEqual({ fail: refused });
      expect(await AdbWireClient.ask(address, `host-serial:${MOTO}:features`)).toEqual({ fail: refused });
      expect(await AdbWireClient.ask(address, 'host-transport-id:10:get-state')).toEqual({
        fail: `transport ids are not offered here: name the device with -s ${PIXEL}`,
      });
    }
    // Bound to its own phone first, then asking for another on the same connection.
    const client = await AdbWireClient.connect(unix);
    expect(await client.send(`host:transport:${PIXEL}`).status()).toBe('OKAY');
    expect(await client.send(`host:transport:${MOTO}`).status()).toEqual({ fail: refused });
    expect(fake.device(MOTO).commands).toHaveLength(sent);
    expect(refusals.some((line) => line.includes(`refused 'host:transport:${MOTO}'`))).toBe(true);
  });

  it('leaves the shared ADB server running when a script asks it to stop, and refuses connect, disconnect and pairing', async () => {
    const victim = await FakeAdbServer.start([]);
    expect(await AdbWireClient.connect({ port: victim.port }).then((client) => client.send('host:kill').status())).toBe(
      'OKAY',
    );
    expect(victim.killed).toBe(true);

    expect(await AdbWireClient.ask(unix, 'host:kill')).toEqual({
      fail: 'the ADB server is shared by every phone on this host: a run may not stop it',
    });
    for (const request of [
      'host:connect:10.0.0.7:5555',
      'host:disconnect:',
      `host:disconnect:${MOTO}`,
      'host:pair:123456:10.0.0.7:37000',
    ]) {
      expect(await AdbWireClient.ask(tcp, request)).toEqual({
        fail: expect.stringMatching(/may not connect, disconnect or pair/),
      });
    }
    expect(fake.killed).toBe(false);
    expect(await AdbWireClient.ask(direct, 'host:version')).toBe('0029');
    expect(await AdbWireClient.ask(unix, 'host:version')).toBe('0029');
  });

  it('closes on garbage, oversized or slow input and goes on serving others', async () => {
    for (const junk of [
      Buffer.from('GET / HTTP/1.1\r\n\r\n'),
      Buffer.from('zzzzhost:devices'),
      Buffer.alloc(256 * 1024, 0x41),
    ]) {
      const client = await AdbWireClient.connect(unix);
      client.socket.write(junk);
      await client.closed();
    }
    // A length that promises more than ever comes, from a client that then says nothing: closed at the deadline.
    const slow = await openAdbEndpoint({
      serial: PIXEL,
      upstream: { host: '127.0.0.1', port: fake.port },
      socketPath: path.join(path.dirname(endpoint.socketPath), 'slow.sock'),
      requestTimeoutMs: 300,
    });
    try {
      const client = await AdbWireClient.connect({ path: slow.socketPath });
      client.socket.write('ffffhost:');
      const started = Date.now();
      await client.closed();
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await slow.close();
    }
    expect(await AdbWireClient.ask(unix, 'host:devices')).toBe(`${PIXEL}\tdevice\n`);
    // Without the server behind it, a client is told so.
    const orphan = await openAdbEndpoint({
      serial: PIXEL,
      upstream: { host: '127.0.0.1', port: await closedPort() },
      socketPath: path.join(path.dirname(endpoint.socketPath), 'orphan.sock'),
    });
    try {
      expect(await AdbWireClient.ask({ path: orphan.socketPath }, 'host:devices')).toEqual({
        fail: expect.stringContaining("the host's ADB server does not answer: connect ECONNREFUSED"),
      });
    } finally {
      await orphan.close();
    }
    expect(fake.requests.filter((request) => !/^host:(devices|list-forward)$/.test(request))).toEqual([]);
  });

  it("forwards ports to its own phone only, never over another's, and removes them when the run ends", async () => {
    fake.device(PIXEL).tcpServices.set('tcp:6790', (socket) => socket.end('uiautomator2 of Pixel'));
    const motoForward = await AdbWireClient.connect(direct);
    expect(await motoForward.send(`host-serial:${MOTO}:forward:tcp:0;tcp:6790`).status()).toBe('OKAY');
    expect(await motoForward.status()).toBe('OKAY');
    const motoLocal = `tcp:${await motoForward.string()}`;

    const forward = await AdbWireClient.connect(unix);
    expect(await forward.send(`host:transport:${PIXEL}`).status()).toBe('OKAY');
    expect(await forward.send('host:forward:tcp:0;tcp:6790').status()).toBe('OKAY');
    expect(await forward.status()).toBe('OKAY');
    const port = Number(await forward.string());
    const reached = await new Promise<string>((resolve) =>
      net.connect(port, '127.0.0.1').on('data', (data) => resolve(data.toString())),
    );
    expect(reached).toBe('uiautomator2 of Pixel');

    // Taking over, removing or listing the other phone's forward.
    const takeOver = await AdbWireClient.connect(tcp);
    expect(await takeOver.send(`host-serial:${PIXEL}:forward:${motoLocal};tcp:6790`).status()).toBe('OKAY');
    expect(await takeOver.status()).toEqual({
      fail: `cannot rebind existing socket: ${motoLocal} is forwarded to another device`,
    });
    const kill = await AdbWireClient.connect(unix);
    expect(await kill.send(`host:killforward:${motoLocal}`).status()).toBe('OKAY');
    expect(await kill.status()).toEqual({ fail: `listener '${motoLocal}' not found` });
    expect(await AdbWireClient.ask(unix, 'host:list-forward')).toBe(`${PIXEL} tcp:${port} tcp:6790\n`);
    expect(await AdbWireClient.ask(unix, `host-serial:${PIXEL}:forward:localfilesystem:/tmp/x;tcp:1`)).toEqual({
      fail: "forwarding from 'localfilesystem:/tmp/x' is not offered: only tcp:<port> on the host's loopback",
    });
    const all = await AdbWireClient.connect(unix);
    expect(await all.send(`host-serial:${PIXEL}:killforward-all`).status()).toBe('OKAY');
    expect(await all.status()).toBe('OKAY');
    expect(fake.forwards.list()).toBe(`${MOTO} ${motoLocal} tcp:6790\n`);

    const again = await AdbWireClient.connect(unix);
    expect(await again.send(`host-serial:${PIXEL}:forward:tcp:0;tcp:6790`).status()).toBe('OKAY');
    await endpoint.close();
    expect(fake.forwards.list()).toBe(`${MOTO} ${motoLocal} tcp:6790\n`);
    expect(fs.existsSync(endpoint.socketPath)).toBe(false);
    await expect(AdbWireClient.connect(tcp)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('refuses what would let the phone reach the host, leave it, or strand it', async () => {
    const device = async (request: string) => {
      const client = await AdbWireClient.connect(unix);
      try {
        expect(await client.send(`host:transport:${PIXEL}`).status()).toBe('OKAY');
        return await client.send(request).status();
      } finally {
        client.close();
      }
    };
    expect(await device('reverse:forward:tcp:5037;tcp:5037')).toEqual({
      fail: expect.stringContaining('reverse forwarding is not offered'),
    });
    expect(await device('tcpip:5555')).toEqual({ fail: expect.stringContaining('adb over TCP/IP is not offered') });
    expect(await device('reboot:bootloader')).toEqual({
      fail: expect.stringContaining("the phone would leave adb's reach"),
    });
    expect(await AdbWireClient.ask(unix, 'shell:id')).toEqual({ fail: expect.stringContaining('no transport') });
    expect(fake.requests.filter((request) => /^(reverse|tcpip|reboot|shell)/.test(request))).toEqual([]);
  });

  it('serves adbkit through the port: its own phone only', async () => {
    const client = Adb.createClient({ host: '127.0.0.1', port: endpoint.tcpPort! });
    expect((await client.listDevices()).map((device: { id: string }) => device.id)).toEqual([PIXEL]);
    const output = await client.getDevice(PIXEL).shell('getprop ro.product.model');
    expect((await Adb.util.readAll(output)).toString()).toBe('Pixel 7\n');
    await expect(client.getDevice(MOTO).shell('getprop ro.product.model')).rejects.toThrow(/not this run's device/);
  });
});

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const adbBinary = ['/usr/bin/adb', '/usr/lib/android-sdk/platform-tools/adb'].find((file) => fs.existsSync(file));

describe.skipIf(adbBinary === undefined)(
  "the adb command line through a run's ADB endpoint (ADB_SERVER_SOCKET=localfilesystem:…)",
  () => {
    let fake: FakeAdbServer;
    let endpoint: AdbEndpoint;
    const run = promisify(execFile);
    const adb = async (...args: string[]) => {
      try {
        const { stdout, stderr } = await run(adbBinary!, args, {
          env: { PATH: '/usr/bin:/bin', HOME: root, ...endpoint.env(), ANDROID_ADB_SERVER_PORT: '' },
          timeout: 20_000,
        });
        return { code: 0, out: stdout + stderr };
      } catch (error) {
        const failed = error as { code?: number; stdout?: string; stderr?: string };
        return { code: failed.code ?? -1, out: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
      }
    };

    beforeAll(async () => {
      fake = await FakeAdbServer.start([{ serial: PIXEL }, { serial: MOTO, model: 'moto-g5' }]);
      endpoint = await openAdbEndpoint({
        serial: PIXEL,
        upstream: { host: '127.0.0.1', port: fake.port },
        socketPath: path.join(fs.mkdtempSync(path.join(root, 'cli-')), 'adb.sock'),
        tcp: false,
      });
    });
    afterAll(async () => {
      await endpoint.close();
      await fake.close();
    });

    it("devices, shell, exec-out, push, install, logcat and forward reach the run's phone; another serial, transport ids, kill-server, connect, reverse, tcpip do not", async () => {
      expect(await adb('devices')).toEqual({ code: 0, out: `List of devices attached\n${PIXEL}\tdevice\n\n` });
      expect(await adb('-s', PIXEL, 'shell', 'getprop', 'ro.product.model')).toEqual({ code: 0, out: 'Pixel 7\n' });
      expect(await adb('shell', 'getprop', 'ro.product.model')).toEqual({ code: 0, out: 'Pixel 7\n' });
      expect(await adb('-s', MOTO, 'shell', 'getprop', 'ro.product.model')).toEqual({
        code: 1,
        out: expect.stringContaining(`device '${MOTO}' is not this run's device`),
      });
      expect(await adb('-t', '3', 'shell', 'id')).toEqual({
        code: 1,
        out: `error: transport ids are not offered here: name the device with -s ${PIXEL}\n`,
      });
      expect(fake.device(MOTO).commands).toEqual([]);
      expect(await adb('-d', 'exec-out', 'echo', 'usb')).toEqual({ code: 0, out: 'usb\n' });
      expect(await adb('get-serialno')).toEqual({ code: 0, out: `${PIXEL}\n` });
      for (const args of [
        ['connect', '10.0.0.7:5555'],
        ['disconnect'],
        ['reconnect'],
        ['tcpip', '5555'],
        ['reboot', 'bootloader'],
      ]) {
        expect((await adb(...args)).out, args.join(' ')).toMatch(/not offered|may not/);
      }

      const file = path.join(root, 'note.txt');
      fs.writeFileSync(file, 'hello phone');
      expect((await adb('push', file, '/data/local/tmp/note.txt')).code).toBe(0);
      expect(fake.device(PIXEL).files.get('/data/local/tmp/note.txt')?.toString()).toBe('hello phone');
      const apk = await testApk(root, 'com.devicecloud.cli.test');
      expect(await adb('install', apk.path)).toMatchObject({ code: 0, out: expect.stringContaining('Success') });
      expect(fake.device(PIXEL).packages.has('com.devicecloud.cli.test')).toBe(true);
      fake.device(PIXEL).logLine(4242, 'I', 'DeviceCloud', 'hello from the log');
      expect((await adb('logcat', '-d')).out).toContain('DeviceCloud: hello from the log');

      fake.device(PIXEL).tcpServices.set('tcp:4724', (socket) => socket.end('appium on the phone'));
      const forwarded = await adb('forward', 'tcp:0', 'tcp:4724');
      expect(forwarded.code).toBe(0);
      const reached = await new Promise<string>((resolve) =>
        net.connect(Number(forwarded.out.trim()), '127.0.0.1').on('data', (data) => resolve(data.toString())),
      );
      expect(reached).toBe('appium on the phone');
      expect((await adb('forward', '--list')).out.trim()).toBe(`${PIXEL} tcp:${forwarded.out.trim()} tcp:4724`);
      expect((await adb('forward', '--remove-all')).code).toBe(0);
      expect(fake.forwards.list()).toBe('');

      expect(await adb('reverse', 'tcp:8081', 'tcp:5037')).toMatchObject({
        code: 1,
        out: expect.stringContaining('reverse forwarding is not offered'),
      });
      await adb('kill-server');
      expect(fake.killed).toBe(false);
      expect(await adb('-s', PIXEL, 'get-state')).toEqual({ code: 0, out: 'device\n' });
    });
  },
);

describe("a run's ADB endpoint for a script without network (forwards made by its relay)", () => {
  /** Plays the relay of sandbox-relay.mjs on the control socket: each request, and the answer the test gives. */
  async function relayOn(socketPath: string, answer: (request: Record<string, unknown>) => Record<string, unknown>) {
    const socket = net.connect(socketPath);
    await new Promise((resolve) => socket.once('connect', resolve));
    const heard: Array<Record<string, unknown>> = [];
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString();
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const request = JSON.parse(pending.slice(0, end)) as Record<string, unknown>;
        pending = pending.slice(end + 1);
        heard.push(request);
        socket.write(`${JSON.stringify({ id: request.id, ...answer(request) })}\n`);
      }
    });
    return { socket, heard };
  }

  it("makes forwards inside the sandbox through the relay, never on the host's server, and says so when the relay is not there", async () => {
    const fake = await FakeAdbServer.start([{ serial: PIXEL }, { serial: MOTO, model: 'moto-g5' }]);
    const dir = fs.mkdtempSync(path.join(root, 'relay-'));
    const control = path.join(dir, 'adb-relay.sock');
    const endpoint = await openAdbEndpoint({
      serial: PIXEL,
      upstream: { host: '127.0.0.1', port: fake.port },
      socketPath: path.join(dir, 'adb.sock'),
      relayControlPath: control,
    });
    const unix = { path: endpoint.socketPath };
    const forward = async (spec: string) => {
      const client = await AdbWireClient.connect(unix);
      expect(await client.send(`host-serial:${PIXEL}:${spec}`).status()).toBe('OKAY');
      const second = await client.status();
      return second === 'OKAY' && spec.startsWith('forward') ? Number(await client.string()) : second;
    };
    try {
      expect(endpoint.env()).toEqual({ ADB_SERVER_SOCKET: `localfilesystem:${endpoint.socketPath}` });
      expect(await forward('forward:tcp:8200;tcp:6790')).toEqual({
        fail: "cannot bind listener: the run's relay is not running",
      });

      const relay = await relayOn(control, (request) =>
        request.listen === 8300
          ? { error: 'listen EADDRINUSE: address already in use 127.0.0.1:8300' }
          : { port: request.listen === 0 ? 41234 : request.listen },
      );
      // Only the first connection is the relay: another (the script's) is not heard.
      const impostor = net.connect(control);
      await new Promise((resolve) => impostor.on('close', resolve).on('error', () => undefined));

      expect(await forward('forward:tcp:8200;tcp:6790')).toBe(8200);
      expect(await forward('forward:tcp:0;localabstract:appium')).toBe(41234);
      expect(await forward('forward:norebind:tcp:8200;tcp:1')).toEqual({ fail: 'cannot rebind existing socket' });
      expect(await forward('forward:tcp:8300;tcp:6790')).toEqual({
        fail: 'cannot bind listener: listen EADDRINUSE: address already in use 127.0.0.1:8300',
      });
      expect(await AdbWireClient.ask(unix, 'host:list-forward')).toBe(
        `${PIXEL} tcp:8200 tcp:6790\n${PIXEL} tcp:41234 localabstract:appium\n`,
      );
      expect(await forward('killforward:tcp:9999')).toEqual({ fail: "listener 'tcp:9999' not found" });
      expect(await forward('killforward:tcp:8200')).toBe('OKAY');
      expect(await forward('killforward-all')).toBe('OKAY');
      expect(await AdbWireClient.ask(unix, 'host:list-forward')).toBe('');
      expect(relay.heard.map(({ id: _, ...request }) => request)).toEqual([
        { listen: 8200, remote: 'tcp:6790' },
        { listen: 0, remote: 'localabstract:appium' },
        { listen: 8300, remote: 'tcp:6790' },
        { close: 8200 },
        { close: 41234 },
      ]);
      // Other phones' forwards are not the relay's to make: the policy refuses before.
      expect(await AdbWireClient.ask(unix, `host-serial:${MOTO}:forward:tcp:8400;tcp:6790`)).toEqual({
        fail: expect.stringContaining("is not this run's device"),
      });
      expect(fake.requests.filter((request) => request.includes('forward:'))).toEqual([]);
      expect(fake.forwards.list()).toBe('');
      relay.socket.destroy();
    } finally {
      await endpoint.close();
      await fake.close();
    }
    expect(fs.existsSync(control)).toBe(false);
  });
});

describe("a run's ADB endpoint that cannot start whole", () => {
  it('leaves nothing listening when a later part of its start fails, and refuses socket paths the kernel cannot take', async () => {
    const dir = fs.mkdtempSync(path.join(root, 'half-'));
    const socketPath = path.join(dir, 'adb.sock');
    // The relay's channel cannot be made (its folder does not exist), after the unix socket is up.
    const opening = openAdbEndpoint({
      serial: PIXEL,
      upstream: { host: '127.0.0.1', port: 1 },
      socketPath,
      tcp: true,
      relayControlPath: path.join(dir, 'missing', 'adb-relay.sock'),
    });
    await expect(opening).rejects.toThrow(/listen (ENOENT|EACCES)/);
    expect(fs.existsSync(socketPath)).toBe(false);
    const connected = await new Promise<boolean>((resolve) =>
      net
        .connect(socketPath)
        .once('connect', () => resolve(true))
        .once('error', () => resolve(false)),
    );
    expect(connected).toBe(false);
    const long = path.join(dir, 'x'.repeat(100), 'adb-relay.sock');
    await expect(
      openAdbEndpoint({ serial: PIXEL, upstream: { host: '127.0.0.1', port: 1 }, socketPath, relayControlPath: long }),
    ).rejects.toThrow(/too long/);
    expect(fs.existsSync(socketPath)).toBe(false);
  });
});
