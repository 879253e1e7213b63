/**
 * The video of a session on an iPhone (docs/drivers.md#videos): go-ios serves the device's screen
 * as an MJPEG stream over HTTP on a local port (`ios screenshot --stream --port=N`); each image of
 * it becomes the current frame of a recording at a steady frame rate, so the video keeps wall time
 * however irregularly the phone sends pictures.
 */
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Recording, VideoOutcome } from '../../driver.ts';
import { IMAGE_INPUT, recordFrames } from '../host/ffmpeg.ts';
import type { GoIos } from './go-ios.ts';

/** Frames a second of an iPhone's video: go-ios sends a few pictures a second at best. */
export const IOS_VIDEO_FPS = 5;
/** How long go-ios may take to start serving the stream. */
const CONNECT_MS = 15_000;

export async function recordScreen(
  goIos: GoIos,
  udid: string,
  options: { readonly ffmpeg: string; readonly dir: string },
): Promise<Recording> {
  const port = await freePort();
  const stream = goIos.start(['screenshot', '--stream', `--port=${port}`, `--udid=${udid}`]);
  let exited = false;
  void stream.exited.then(() => (exited = true));
  let latest: Buffer | null = null;
  let response: http.IncomingMessage | null = null;
  const connecting = (async () => {
    for (const deadline = Date.now() + CONNECT_MS; Date.now() < deadline && !exited; await sleep(100)) {
      try {
        response = await get(`http://127.0.0.1:${port}/`);
        const frames = new MultipartImages((image) => (latest = image));
        response.on('data', (chunk: Buffer) => frames.push(chunk));
        response.on('error', () => undefined);
        return;
      } catch {
        // not serving yet
      }
    }
  })();
  const recording = recordFrames({
    ffmpeg: options.ffmpeg,
    file: path.join(options.dir, 'video.mp4'),
    input: IMAGE_INPUT,
    fps: IOS_VIDEO_FPS,
    frame: () => latest,
  });
  return {
    async stop(): Promise<VideoOutcome> {
      const outcome = await recording.stop();
      (response as http.IncomingMessage | null)?.destroy();
      await stream.stop();
      await connecting;
      if (outcome.file === null && latest === null && exited)
        return { file: null, reason: 'go-ios ended its screen stream before sending a picture' };
      return outcome;
    },
  };
}

/**
 * Splits `multipart/x-mixed-replace` into its images: by each part's Content-Length where it
 * says one, else from a JPEG's start to its end marker.
 */
export class MultipartImages {
  private buffer = Buffer.alloc(0);

  constructor(private readonly onImage: (image: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const headers = this.buffer.subarray(0, headerEnd).toString('latin1');
      if (!/content-type/i.test(headers)) {
        // Blank lines between parts.
        this.buffer = this.buffer.subarray(headerEnd + 4);
        continue;
      }
      const bodyStart = headerEnd + 4;
      const length = /content-length:\s*(\d+)/i.exec(headers);
      let bodyEnd: number;
      if (length !== null) bodyEnd = bodyStart + Number(length[1]);
      else {
        const end = this.buffer.indexOf(Buffer.from([0xff, 0xd9]), bodyStart);
        if (end < 0) return;
        bodyEnd = end + 2;
      }
      if (this.buffer.length < bodyEnd) return;
      this.onImage(Buffer.from(this.buffer.subarray(bodyStart, bodyEnd)));
      this.buffer = this.buffer.subarray(bodyEnd);
    }
  }
}

function get(url: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, (response) => {
      if (response.statusCode === 200) resolve(response);
      else {
        response.destroy();
        reject(new Error(`HTTP ${response.statusCode}`));
      }
    });
    request.on('error', reject);
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
