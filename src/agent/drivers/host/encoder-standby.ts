/**
 * Video encoders started ahead, one per device that records. Starting ffmpeg costs about 0.1 s of
 * CPU (Debian's links some 200 shared libraries), where encoding a short session's frames costs
 * about 10 ms: started while its device is idle (being cleaned), the next session's encoder is
 * ready when the device takes work, instead of starting on the way to the tests and competing
 * with them for the host's cores (docs/benchmarks.md, orchestration overhead). Only devices that
 * recorded once get one, so that a host whose runs never record runs no ffmpeg.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type FrameEncoder, isWaiting } from './ffmpeg.ts';

export type EncoderStandby = ReturnType<typeof encoderStandby>;

/** `start` starts an encoder for the device into the file it is given; encoders write in `dir`. */
export function encoderStandby(dir: string, start: (serial: string, file: string) => FrameEncoder) {
  const ready = new Map<string, FrameEncoder>();
  const recorded = new Set<string>();
  let count = 0;
  let closed = false;
  return {
    /** The encoder started for the device's next session, if one waits; the device now records. */
    take(serial: string): FrameEncoder | undefined {
      recorded.add(serial);
      const encoder = ready.get(serial);
      ready.delete(serial);
      return encoder !== undefined && isWaiting(encoder) ? encoder : undefined;
    },
    /** Starts the next session's encoder of a device that records, unless one waits. */
    prepare(serial: string): void {
      if (closed || !recorded.has(serial)) return;
      const waiting = ready.get(serial);
      if (waiting !== undefined && isWaiting(waiting)) return;
      fs.mkdirSync(dir, { recursive: true });
      count += 1;
      ready.set(serial, start(serial, path.join(dir, `${count}.mp4`)));
    },
    /** Stops the waiting encoders and removes what they wrote. */
    async close(): Promise<void> {
      closed = true;
      const waiting = [...ready.values()];
      ready.clear();
      for (const encoder of waiting) encoder.child.kill('SIGKILL');
      await Promise.all(waiting.map((encoder) => encoder.exit));
      // Not the folder: a session still recording writes its video there until it stops.
      await Promise.all(waiting.map((encoder) => fs.promises.rm(encoder.file, { force: true })));
    },
  };
}
