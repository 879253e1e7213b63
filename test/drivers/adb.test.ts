/**
 * The adb driver against a fake ADB server that speaks the wire protocol (test/support/fake-adb):
 * the conformance suite, the phones as the driver sees them, and the fake server itself. What is
 * particular to phones is in adb-*.test.ts. No phone is involved; the same conformance cases run on
 * a real one in test/hardware/adb.hw.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Adb } from '../../src/agent/drivers/adb/adbkit.ts';
import { baselinePath } from '../../src/agent/drivers/adb/baseline.ts';
import { noSandbox } from '../../src/agent/drivers/host/sandbox.ts';
import { createAdbDriver } from '../../src/agent/drivers/adb/index.ts';
import { FakeAdbServer } from '../support/fake-adb/index.ts';
import { describeDriverConformance, recorder } from './conformance.ts';
import {
  root,
  fixtures,
  driverFor,
  instrumentation,
  adbBench,
  PIXEL,
  MOTO,
  LAB_ACCOUNT,
  adbFiles,
} from './adb-world.ts';

adbFiles();

describeDriverConformance('adb (fake ADB server)', async () => {
  const fake = await FakeAdbServer.start([{ serial: '28141FDH2000JY' }]);
  return {
    driver: driverFor(fake, fs.mkdtempSync(path.join(root, 'conformance-'))),
    fixtures,
    cleanup: () => fake.close(),
  };
});

describe('adb driver', () => {
  const { bench, job, until } = adbBench({ firstSight: false });

  it('describes each phone from its properties and records its baseline on first sight', async () => {
    const devices = await bench.driver.listDevices();
    expect(
      devices.map((device) => [
        device.serial,
        device.displayName,
        device.manufacturer,
        device.releaseVersion,
        device.apiLevel,
      ]),
    ).toEqual([
      [PIXEL, 'Google Pixel 7', 'Google', '14', 34],
      [MOTO, 'Motorola Moto G (5)', 'Motorola', '7.0', 24],
    ]);
    expect(devices[0]!.executionKinds).toEqual([
      'instrumentation',
      'uiautomator',
      'server-side',
      'calabash',
      'crawler',
      'interactive',
    ]);
    const baseline = JSON.parse(fs.readFileSync(baselinePath(bench.dataDir, PIXEL), 'utf8'));
    expect(baseline).toMatchObject({ wifiOn: true, locale: 'en-US', accounts: [LAB_ACCOUNT] });
    expect(baseline.packages).toContain('com.android.chrome');
    expect(baseline.files).toContain('/sdcard/Download');
    expect(bench.fake.requests).toContain('host:track-devices');
  });

  it('follows phones coming and going, and says why one cannot be used', async () => {
    bench.fake.plug({ serial: 'NEWPHONE1' });
    await until(async () => (await bench.driver.listDevices()).some((device) => device.serial === 'NEWPHONE1'));
    expect(await bench.driver.health('NEWPHONE1')).toEqual({ ok: true });
    bench.fake.setState('NEWPHONE1', 'unauthorized');
    await until(async () => !(await bench.driver.health('NEWPHONE1')).ok);
    expect(await bench.driver.health('NEWPHONE1')).toEqual({
      ok: false,
      reason: expect.stringContaining('USB debugging is not authorized'),
    });
    expect((await bench.driver.listDevices()).map((device) => device.serial)).not.toContain('NEWPHONE1');
    bench.fake.setState('NEWPHONE1', 'offline');
    await until(
      async () =>
        ((await bench.driver.health('NEWPHONE1')) as { reason?: string }).reason?.includes('offline') ?? false,
    );
    bench.fake.unplug('NEWPHONE1');
    await until(
      async () =>
        ((await bench.driver.health('NEWPHONE1')) as { reason?: string }).reason?.includes('not connected') ?? false,
    );
    expect(await bench.driver.clean('NEWPHONE1')).toEqual({
      ok: false,
      report: 'cannot clean: the phone is not connected to this host',
    });
    expect(
      await bench.driver.execute(job({ ...instrumentation('sample'), serial: 'NEWPHONE1' }), recorder().context),
    ).toMatchObject({ outcome: 'INFRA_ERROR', failReason: 'the phone is not connected to this host' });
    expect(bench.logs).toContain('NEWPHONE1: disconnected');
  });

  it('reports a low or hot battery, and a phone still booting, as unhealthy', async () => {
    const pixel = bench.fake.device(PIXEL);
    pixel.battery = { level: 9, temperature: 300 };
    expect(await bench.driver.health(PIXEL)).toEqual({
      ok: false,
      reason: 'the battery is at 9% (is the hub port charging it?)',
    });
    pixel.battery = { level: 80, temperature: 472 };
    expect(await bench.driver.health(PIXEL)).toEqual({
      ok: false,
      reason: 'the battery is at 47.2 °C: let the phone cool down',
    });
    pixel.battery = { level: 87, temperature: 291 };
    pixel.props.set('sys.boot_completed', '');
    expect(await bench.driver.health(PIXEL)).toEqual({ ok: false, reason: 'the phone is still booting' });
    pixel.props.set('sys.boot_completed', '1');
    expect(await bench.driver.health(PIXEL)).toEqual({ ok: true });
  });

  it('says when the ADB server cannot be reached', async () => {
    const gone = await FakeAdbServer.start();
    const port = gone.port;
    await gone.close();
    const orphan = createAdbDriver({
      dataDir: fs.mkdtempSync(path.join(root, 'noserver-')),
      server: { host: '127.0.0.1', port },
      log: () => undefined,
      adbBinary: path.join(root, 'no-adb-here'),
      sandbox: noSandbox(),
    });
    try {
      await expect(orphan.listDevices()).rejects.toThrow(`the ADB server cannot be reached`);
    } finally {
      await orphan.close();
    }
  });
});

describe('fake ADB server', () => {
  it('answers host services and the sync protocol as the ADB server does', async () => {
    const fake = await FakeAdbServer.start([{ serial: 'WIRE1' }, { serial: 'WIRE2', state: 'unauthorized' }]);
    const client = Adb.createClient({ host: '127.0.0.1', port: fake.port });
    try {
      expect(await client.version()).toBe(0x29);
      expect(await client.listDevices()).toEqual([
        { id: 'WIRE1', type: 'device' },
        { id: 'WIRE2', type: 'unauthorized' },
      ]);
      expect((await client.listDevicesWithPaths())[0]).toMatchObject({
        id: 'WIRE1',
        type: 'device',
        model: 'model:Pixel_7',
      });
      expect(await client.getDevice('WIRE2').getState()).toBe('unauthorized');
      await expect(client.getDevice('WIRE2').getProperties()).rejects.toThrow('device unauthorized');
      await expect(client.getDevice('NOPE').getProperties()).rejects.toThrow("device 'NOPE' not found");
      const device = client.getDevice('WIRE1');
      const local = path.join(root, 'hello.txt');
      fs.writeFileSync(local, 'hello over sync\n'.repeat(10_000));
      const pushed = await device.push(local, '/data/local/tmp/x.txt');
      await new Promise((resolve, reject) => pushed.on('end', resolve).on('error', reject));
      expect((await device.stat('/data/local/tmp/x.txt')).isFile()).toBe(true);
      expect((await device.readdir('/data/local/tmp')).map((entry: { name: string }) => entry.name)).toEqual(['x.txt']);
      const pulled = await device.pull('/data/local/tmp/x.txt');
      const chunks: Buffer[] = [];
      await new Promise((resolve, reject) =>
        pulled
          .on('data', (chunk: Buffer) => chunks.push(chunk))
          .on('end', resolve)
          .on('error', reject),
      );
      expect(Buffer.concat(chunks).equals(fs.readFileSync(local))).toBe(true);
      await expect(device.stat('/data/local/tmp/missing')).rejects.toThrow('ENOENT');
      expect(fake.device('WIRE1').commands).toEqual(
        expect.arrayContaining(['sync:SEND /data/local/tmp/x.txt,33188', 'sync:RECV /data/local/tmp/x.txt']),
      );
    } finally {
      await fake.close();
    }
  });
});
