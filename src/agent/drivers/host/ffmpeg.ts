/**
 * ffmpeg on the device host, for the videos of device sessions (docs/drivers.md#videos): encoding
 * frames a driver draws (virtual devices), encoding a stream a device sends (iOS), joining
 * segments a device recorded (adb) without re-encoding. Every video is H.264 in MP4 with its index
 * first (`+faststart`), which Chromium plays and seeks while it downloads.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Recording, VideoOutcome } from '../../driver.ts';

/** The Debian package that brings a missing tool, for the message that names it. */
const PACKAGE_OF: Readonly<Record<string, string>> = { ffmpeg: 'ffmpeg' };

/** Whether `command` (a name looked up in PATH, or a path) can run; answers its path or null. */
export function findTool(command: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = command.includes('/')
    ? [command]
    : (env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, command));
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** The sentence an agent logs at start for a tool it lacks, and what is lost without it. */
export function missingToolMessage(command: string, lost: string): string {
  const name = path.basename(command);
  const pkg = PACKAGE_OF[name];
  return `${command} is missing on this device host${pkg === undefined ? '' : ` (Debian package ${pkg})`}: ${lost}`;
}

/** A recording that never started: it ends with why. */
export function noRecording(reason: string): Recording {
  return { stop: async () => ({ file: null, reason }) };
}

const H264_OUT = [
  '-c:v',
  'libx264',
  '-preset',
  'veryfast',
  '-crf',
  '28',
  '-pix_fmt',
  'yuv420p',
  '-movflags',
  '+faststart',
];

/** ffmpeg's input for frames of raw RGBA pixels (what virtual devices draw). */
export function rgbaInput(width: number, height: number): string[] {
  return ['-f', 'rawvideo', '-pix_fmt', 'rgba', '-s', `${width}x${height}`];
}

/** ffmpeg's input for frames that are each a whole JPEG or PNG image (what iOS streams). */
export const IMAGE_INPUT: readonly string[] = ['-f', 'image2pipe'];

/** An ffmpeg that encodes the frames written to its input into `file`; it may be started before it has any. */
export interface FrameEncoder {
  readonly child: ChildProcess;
  readonly file: string;
  readonly exit: Promise<{ code: number | null; error: string }>;
}

export function startFrameEncoder(options: {
  readonly ffmpeg: string;
  readonly file: string;
  readonly input: readonly string[];
  readonly fps: number;
}): FrameEncoder {
  const { fps } = options;
  const child = spawn(
    options.ffmpeg,
    [
      ...['-hide_banner', '-loglevel', 'error', '-y'],
      ...options.input,
      // Times come from the frames' count, not the clock: an encoder that waited for its first
      // frame starts its video at that frame.
      ...['-framerate', String(fps), '-i', 'pipe:0'],
      // H.264 in yuv420p needs even sides.
      ...['-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2'],
      ...H264_OUT,
      // A key frame every two seconds: a seek in the player lands close to where it aims.
      ...['-g', String(fps * 2)],
      options.file,
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  child.stdin!.on('error', () => undefined);
  return { child, file: options.file, exit: exitOf(child) };
}

/** Whether an encoder started ahead can still take a recording (it did not die while it waited). */
export function isWaiting(encoder: FrameEncoder): boolean {
  return encoder.child.exitCode === null && encoder.child.signalCode === null && !encoder.child.killed;
}

/**
 * Records the frames `frame()` answers (in the format `input` names; null while there is none
 * yet) at `fps` frames a second of wall time: frames missed while the host was busy, or before the
 * first one came, are made up with the current one, so the video lasts as long as the session did
 * and its times match the steps'. `encoder`: one started ahead for the same input (its file is
 * moved to `file` at the end); else one is started now.
 */
export function recordFrames(options: {
  readonly ffmpeg: string;
  readonly file: string;
  readonly input: readonly string[];
  readonly fps: number;
  readonly frame: () => Buffer | null;
  readonly now?: () => number;
  readonly encoder?: FrameEncoder;
}): Recording {
  const now = options.now ?? Date.now;
  const { fps } = options;
  const encoder = options.encoder ?? startFrameEncoder(options);
  const { child } = encoder;
  const started = now();
  let written = 0;
  let congested = false;
  let ended = false;
  const stdin = child.stdin!;
  stdin.on('drain', () => (congested = false));
  const pump = () => {
    if (ended || congested) return;
    const due = Math.floor(((now() - started) * fps) / 1000) + 1;
    if (due <= written) return;
    const frame = options.frame();
    if (frame === null) return;
    while (written < due && !congested) {
      written += 1;
      congested = !stdin.write(frame);
    }
  };
  pump();
  const timer = setInterval(pump, Math.max(10, Math.floor(1000 / fps / 2)));
  return {
    async stop() {
      clearInterval(timer);
      if (!congested) pump();
      ended = true;
      stdin.end();
      if (written === 0) child.kill('SIGKILL');
      const finished = await finish(child, encoder.exit, encoder.file);
      const outcome: VideoOutcome =
        written === 0 ? { file: null, reason: 'the device sent no picture of its screen' } : finished;
      if (encoder.file === options.file) return outcome;
      // An encoder started ahead wrote elsewhere: its video moves to where it is wanted.
      if (outcome.file === null) await fs.promises.rm(encoder.file, { force: true });
      else await moveFile(encoder.file, options.file);
      return outcome.file === null ? outcome : { file: options.file };
    },
  };
}

async function moveFile(from: string, to: string): Promise<void> {
  try {
    await fs.promises.rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await fs.promises.copyFile(from, to);
    await fs.promises.rm(from, { force: true });
  }
}

/**
 * Joins the segments of one recording, in order, into `file` with ffmpeg's concat demuxer: the
 * streams are copied, not re-encoded, so joining costs no more than copying.
 */
export async function joinSegments(ffmpeg: string, segments: readonly string[], file: string): Promise<VideoOutcome> {
  if (segments.length === 0) return { file: null, reason: 'the device recorded nothing' };
  const list = `${file}.segments.txt`;
  fs.writeFileSync(list, segments.map((segment) => `file '${segment.replace(/'/g, "'\\''")}'\n`).join(''));
  const child = spawn(
    ffmpeg,
    [
      ...['-hide_banner', '-loglevel', 'error', '-y'],
      ...['-f', 'concat', '-safe', '0', '-i', list],
      ...['-c', 'copy', '-movflags', '+faststart'],
      file,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const outcome = await finish(child, exitOf(child), file);
  fs.rmSync(list, { force: true });
  return outcome;
}

/** How long ffmpeg may take to finish a file once its input ended. */
const FINISH_MS = 60_000;

function exitOf(child: ChildProcess): Promise<{ code: number | null; error: string }> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: null, error: error.message }));
    child.on('close', (code) => resolve({ code, error: stderr.trim() }));
  });
}

async function finish(
  child: ChildProcess,
  exit: Promise<{ code: number | null; error: string }>,
  file: string,
): Promise<VideoOutcome> {
  const timer = setTimeout(() => child.kill('SIGKILL'), FINISH_MS);
  const { code, error } = await exit;
  clearTimeout(timer);
  if (code !== 0) return { file: null, reason: `ffmpeg failed (exit ${code ?? 'none'}): ${error || 'no message'}` };
  if (!fs.existsSync(file) || fs.statSync(file).size === 0) return { file: null, reason: 'ffmpeg wrote no video' };
  return { file };
}
