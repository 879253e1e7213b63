/**
 * The video of a session on an iPhone, against the fake go-ios: the driver asks go-ios for the
 * screen stream on a port of its own, reads the pictures of the multipart stream as they come, and
 * encodes them at a steady rate into a video as long as the recording; a device without a stream
 * gives a reason, not a video.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MultipartImages } from '../../src/agent/drivers/ios/screen-recording.ts';
import { probeVideo } from './conformance.ts';
import { PHONE_1, called, root, world, iosFiles } from './ios-world.ts';

iosFiles();

describe('ios driver: videos', () => {
  it("records go-ios' screen stream into a video as long as the recording", async () => {
    const { driver, fake } = world();
    const dir = fs.mkdtempSync(path.join(root, 'video-'));
    const started = Date.now();
    const recording = await driver.record(PHONE_1, dir);
    // Until go-ios has sent a picture (ffmpeg opens its file once it has read one; on a loaded
    // machine that took more than 2 s), and 2 s at least: the video starts with the recording.
    await expect.poll(() => fs.existsSync(path.join(dir, 'video.mp4'))).toBe(true);
    await sleep(Math.max(0, started + 2000 - Date.now()));
    const video = await recording.stop();
    const seconds = (Date.now() - started) / 1000;
    expect(video.file, video.file === null ? video.reason : '').toBe(path.join(dir, 'video.mp4'));
    const [stream] = called(fake, 'screenshot');
    expect(stream).toEqual(['screenshot', '--stream', expect.stringMatching(/^--port=\d+$/), `--udid=${PHONE_1}`]);
    const probe = probeVideo(video.file!);
    expect(probe.codec).toBe('h264');
    expect(probe.duration).toBeGreaterThan(1.5);
    expect(probe.duration).toBeLessThan(seconds + 0.5);
  });

  it('says why there is no video when the phone sends no picture', async () => {
    const { driver, fake } = world();
    // Without the developer disk image, go-ios cannot start the screenshot service.
    fake.updateDevice(PHONE_1, (device) => (device.ddiMounted = false));
    const recording = await driver.record(PHONE_1, fs.mkdtempSync(path.join(root, 'video-')));
    const video = await recording.stop();
    expect(video).toEqual({ file: null, reason: expect.stringContaining('go-ios ended its screen stream') });
  });

  it('splits a multipart stream into its images, with or without their lengths, across chunks', () => {
    const images: string[] = [];
    const parts = new MultipartImages((image) => images.push(image.toString('latin1')));
    const jpeg = Buffer.from([0xff, 0xd8, 1, 2, 0xff, 0x00, 3, 0xff, 0xd9]);
    const stream = Buffer.concat([
      Buffer.from('--BoundaryString\r\nContent-type: image/png\r\nContent-Length: 5\r\n\r\nPNG!!\r\n\r\n'),
      Buffer.from('--BoundaryString\r\nContent-type: image/jpeg\r\n\r\n'),
      jpeg,
      Buffer.from('\r\n\r\n--BoundaryString\r\nContent-Type: image/png\r\nContent-Length: 3\r\n\r\nabc'),
    ]);
    for (let at = 0; at < stream.length; at += 7) parts.push(stream.subarray(at, at + 7));
    expect(images).toEqual(['PNG!!', jpeg.toString('latin1'), 'abc']);
  });
});
