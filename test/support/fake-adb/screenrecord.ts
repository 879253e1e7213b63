/**
 * The fake phone's `screenrecord` and `pkill`: a recording lasts until its `--time-limit`, or until
 * it is interrupted (`pkill -INT screenrecord`, or the shell hung up), then leaves a real H.264
 * MP4 of the time it ran at its path (made with ffmpeg, as the phone's encoder would), so that
 * what the driver pulls and joins is a video.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FakeDevice } from './device.ts';
import type { ShellIo } from './shell.ts';

const run = promisify(execFile);
const interrupts = new WeakMap<FakeDevice, Set<() => void>>();

export async function screenrecord(device: FakeDevice, args: string[], io: ShellIo): Promise<number> {
  const valued = new Set(['--time-limit', '--size', '--bit-rate']);
  const file = args.filter((arg, index) => !arg.startsWith('--') && !valued.has(args[index - 1] ?? '')).at(-1);
  if (file === undefined) {
    io.write('Usage: screenrecord [options] <filename>\n');
    return 2;
  }
  const limitAt = args.indexOf('--time-limit');
  const seconds = limitAt < 0 ? 180 : Number(args[limitAt + 1]);
  const started = Date.now();
  const handlers = interrupts.get(device) ?? new Set();
  interrupts.set(device, handlers);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, seconds * 1000);
    function done() {
      clearTimeout(timer);
      handlers.delete(done);
      resolve();
    }
    handlers.add(done);
    io.onClose(done);
  });
  device.writeFile(file, await video(Math.max(0.2, (Date.now() - started) / 1000)));
  return 0;
}

/** `pkill -SIGNAL name`: only screenrecord runs long enough on the fake phone to be signalled. */
export function pkill(device: FakeDevice, args: string[]): number {
  const name = args.find((arg) => !arg.startsWith('-'));
  const handlers = name === 'screenrecord' ? [...(interrupts.get(device) ?? [])] : [];
  for (const handler of handlers) handler();
  return handlers.length > 0 ? 0 : 1;
}

async function video(seconds: number): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-screenrecord-'));
  const file = path.join(dir, 'out.mp4');
  try {
    await run('ffmpeg', [
      ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi'],
      ...['-i', `testsrc=size=180x320:rate=10:duration=${seconds.toFixed(2)}`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file],
    ]);
    return fs.readFileSync(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
