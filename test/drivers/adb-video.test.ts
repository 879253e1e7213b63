/**
 * The video of a session on an Android phone, against the fake ADB server: screenrecord runs in
 * consecutive segments (its 3-minute limit, made a second here), the last one is interrupted so
 * that it finishes its file, every segment is pulled and removed from the phone, and the joined
 * video (ffmpeg's concat demuxer, no re-encoding) lasts as long as the recording did.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver } from '../../src/agent/driver.ts';
import { FakeAdbServer } from '../support/fake-adb/index.ts';
import { PIXEL, driverFor, root, adbFiles } from './adb-world.ts';
import { probeVideo } from './conformance.ts';

adbFiles();

describe('adb driver: videos', () => {
  let fake: FakeAdbServer;
  let driver: Driver;
  let dataDir: string;

  beforeAll(async () => {
    fake = await FakeAdbServer.start([{ serial: PIXEL }]);
    dataDir = fs.mkdtempSync(path.join(root, 'video-'));
    driver = driverFor(fake, dataDir, { videoSegmentSeconds: 1 });
    await driver.listDevices();
  });
  afterAll(async () => {
    await driver.close();
    await fake.close();
  });

  const recorded = () =>
    fake.device(PIXEL).commands.filter((command) => command.includes('screenrecord') && !command.includes('pkill'));

  it('records in segments, then pulls, removes and joins them into one video', async () => {
    const dir = fs.mkdtempSync(path.join(dataDir, 'session-'));
    const started = Date.now();
    const recording = await driver.record(PIXEL, dir);
    // Three segments requested: two ran to their limit, the third is running.
    for (const deadline = Date.now() + 30_000; recorded().length < 3; await sleep(50))
      if (Date.now() > deadline) throw new Error(`segments: ${JSON.stringify(recorded())}`);
    const video = await recording.stop();
    const seconds = (Date.now() - started) / 1000;
    expect(video.file, video.file === null ? video.reason : '').toBe(path.join(dir, 'video.mp4'));

    const commands = fake.device(PIXEL).commands;
    const segments = recorded().map((command) => /\/data\/\S+?\.mp4/.exec(command)![0]);
    expect(recorded()[0]).toMatch(/^'?screenrecord'? '?--time-limit'? '?1'? /);
    expect(segments.slice(0, 3)).toEqual([0, 1, 2].map((n) => `/data/local/tmp/devicecloud-video-${n}.mp4`));
    expect(commands.some((command) => /pkill.*-INT.*screenrecord/.test(command))).toBe(true);
    for (const segment of segments) {
      expect(commands).toContain(`sync:RECV ${segment}`);
      expect(fake.device(PIXEL).files.has(segment)).toBe(false);
    }
    expect(commands.some((command) => command.includes('rm') && command.includes(segments[0]!))).toBe(true);

    const probe = probeVideo(video.file!);
    expect(probe.codec).toBe('h264');
    // The segments end to end: as long as the recording ran, give or take the fake's start-ups.
    expect(probe.duration).toBeGreaterThan(2);
    expect(probe.duration).toBeLessThan(seconds + 0.5);
    // Only the video is left in the session's folder.
    expect(fs.readdirSync(dir)).toEqual(['video.mp4']);
  });

  it('says why there is no video when the phone cannot record', async () => {
    const dir = fs.mkdtempSync(path.join(dataDir, 'session-'));
    fake.setState(PIXEL, 'offline');
    for (const deadline = Date.now() + 10_000; (await driver.health(PIXEL)).ok; await sleep(50))
      if (Date.now() > deadline) throw new Error('the phone stayed online');
    const video = await (await driver.record(PIXEL, dir)).stop();
    expect(video).toEqual({ file: null, reason: expect.stringContaining('offline') });
    fake.setState(PIXEL, 'device');
  });
});
