/**
 * The video of a session on an Android phone (docs/drivers.md#videos): `screenrecord` stops by
 * itself after at most 3 minutes, so it runs in consecutive segments on the phone, each started
 * as the previous one ends. Stopping interrupts the running one (SIGINT, on which screenrecord
 * finishes its file), then the segments are pulled, removed from the phone and joined on the host
 * with ffmpeg, without re-encoding.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Recording, VideoOutcome } from '../../driver.ts';
import { joinSegments } from '../host/ffmpeg.ts';
import type { DeviceIo } from './device-io.ts';

/** screenrecord's own limit (and its default) on most Android versions. */
export const SEGMENT_SECONDS = 180;
const REMOTE_PREFIX = '/data/local/tmp/devicecloud-video-';
/** How long the last segment may take to finish its file once interrupted. */
const FINISH_MS = 15_000;

export function recordScreen(
  io: DeviceIo,
  options: { readonly ffmpeg: string; readonly dir: string; readonly segmentSeconds?: number },
): Recording {
  const seconds = options.segmentSeconds ?? SEGMENT_SECONDS;
  const segments: string[] = [];
  let stopping = false;
  let failure: string | null = null;
  let current: { stream: Readable; ended: Promise<void> } | null = null;

  const startSegment = async (): Promise<void> => {
    const remote = `${REMOTE_PREFIX}${segments.length}.mp4`;
    segments.push(remote);
    const started = Date.now();
    const stream = await io.stream(['screenrecord', '--time-limit', String(seconds), remote]);
    let output = '';
    stream.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-500)));
    const ended = new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });
    current = { stream, ended };
    await ended;
    // screenrecord says nothing when it records; anything it says is why it did not.
    if (/not found|usage|error|failed/i.test(output)) failure = `screenrecord: ${output.trim()}`;
    else if (!stopping && Date.now() - started < 500)
      failure = `screenrecord ended at once${output.trim() === '' ? '' : `: ${output.trim()}`}`;
    if (!stopping && failure === null) return startSegment();
  };
  const running = startSegment().catch((error: Error) => {
    failure = `screenrecord could not start: ${error.message}`;
  });

  return {
    async stop(): Promise<VideoOutcome> {
      stopping = true;
      await io.shell(['pkill', '-INT', 'screenrecord']).catch(() => undefined);
      const last = current as { stream: Readable; ended: Promise<void> } | null;
      if (last !== null)
        await Promise.race([last.ended, new Promise((resolve) => setTimeout(resolve, FINISH_MS).unref())]);
      await Promise.race([running, new Promise((resolve) => setTimeout(resolve, FINISH_MS).unref())]);
      last?.stream.destroy();
      const pulled: string[] = [];
      for (const [index, remote] of segments.entries()) {
        const local = path.join(options.dir, `segment-${index}.mp4`);
        try {
          await io.pull(remote, local);
          if (fs.statSync(local).size > 0) pulled.push(local);
        } catch {
          // A segment that never got a file (the phone was interrupted as it started one).
        }
      }
      await io.shell(['rm', '-f', ...segments]).catch(() => undefined);
      if (pulled.length === 0) return { file: null, reason: failure ?? 'the phone recorded nothing' };
      const joined = await joinSegments(options.ffmpeg, pulled, path.join(options.dir, 'video.mp4'));
      for (const local of pulled) fs.rmSync(local, { force: true });
      return joined;
    },
  };
}
