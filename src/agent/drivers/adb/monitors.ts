/**
 * What runs beside the tests on the phone: the logcat capture (the run's device log, and the crash
 * and ANR detector fed from it), CPU and memory of the app under test every second, and
 * screenshots. None of them may fail a run: a sample or a screenshot that cannot be had is skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Artifact, PerformanceSample } from '../../driver.ts';
import type { DeviceIo } from './device-io.ts';
import { parseMeminfo, parseTopCpu } from './device-output.ts';
import { CrashDetector } from './logcat.ts';

export const LOGCAT_LIMIT_BYTES = 10 * 1024 * 1024;
/** toybox's top, with -b/-p, replaced toolbox's in Android 8 (API 26). */
const TOYBOX_TOP_API = 26;

export class LogcatCapture {
  readonly detector = new CrashDetector();
  private written = 0;
  private partial = '';
  private readonly ended: Promise<void>;

  private constructor(
    private readonly stream: NodeJS.ReadableStream & { destroy(): void },
    private readonly out: fs.WriteStream,
    readonly file: string,
  ) {
    this.ended = new Promise((resolve) => {
      const finish = () => {
        if (this.partial !== '') this.detector.push(this.partial);
        this.partial = '';
        this.detector.end();
        if (this.written >= LOGCAT_LIMIT_BYTES) out.write(`\n[logcat truncated after ${LOGCAT_LIMIT_BYTES} bytes]\n`);
        out.end(() => resolve());
      };
      stream.once('end', finish);
      stream.once('close', finish);
      stream.once('error', finish);
    });
    stream.on('data', (chunk: Buffer) => this.take(chunk));
  }

  /** Clears the phone's log buffer (the log is this run's alone) and follows it into `file`. */
  static async start(io: DeviceIo, file: string, signal: AbortSignal): Promise<LogcatCapture> {
    await io.shell(['logcat', '-c'], { signal });
    const stream = await io.stream(['logcat', '-v', 'threadtime'], signal);
    return new LogcatCapture(stream, fs.createWriteStream(file), file);
  }

  async stop(): Promise<Artifact> {
    this.stream.destroy();
    await this.ended;
    return { kind: 'log', path: this.file, name: path.basename(this.file) };
  }

  private take(chunk: Buffer): void {
    // The detector reads every line; the file keeps the first 10 MiB.
    if (this.written < LOGCAT_LIMIT_BYTES) {
      const part = chunk.subarray(0, LOGCAT_LIMIT_BYTES - this.written);
      this.written += part.length;
      this.out.write(part);
    }
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.detector.push(line);
  }
}

/**
 * Samples the app's memory (`dumpsys meminfo`, total PSS, which also names its pid) and CPU
 * (`top -n 1` for that pid) about once a second until stopped. A tick while the app does not run
 * gives no sample.
 */
export function samplePerformance(
  io: DeviceIo,
  packageName: string,
  apiLevel: number | null,
  onSample: (sample: PerformanceSample) => void,
  signal: AbortSignal,
): () => Promise<void> {
  const stopping = new AbortController();
  const both = AbortSignal.any([signal, stopping.signal]);
  const toybox = (apiLevel ?? 0) >= TOYBOX_TOP_API;
  const loop = (async () => {
    while (!both.aborted) {
      const started = Date.now();
      try {
        const memory = parseMeminfo(
          await io.shell(['dumpsys', 'meminfo', packageName], { signal: both, timeoutMs: 10_000 }),
        );
        if (memory !== null) {
          const top = await io.shell(toybox ? ['top', '-b', '-n', '1', '-p', String(memory.pid)] : ['top', '-n', '1'], {
            signal: both,
            timeoutMs: 10_000,
          });
          const cpu = parseTopCpu(top, memory.pid);
          if (cpu !== null && !both.aborted)
            onSample({ timestamp: started, cpuUsage: cpu, memUsage: memory.pssKb, packageName });
        }
      } catch {
        // The phone is busy, gone or we were stopped: the next tick tries again, or the loop ends.
      }
      await sleep(Math.max(0, 1000 - (Date.now() - started)), undefined, { signal: both }).catch(() => undefined);
    }
  })();
  return async () => {
    stopping.abort();
    await loop;
  };
}

/** A screenshot into `dir`, or null when the phone would not give one. */
export async function screenshot(
  io: DeviceIo,
  dir: string,
  name: string,
  signal?: AbortSignal,
): Promise<Artifact | null> {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.png`);
  try {
    await io.screencap(file, signal);
    if (fs.statSync(file).size === 0) throw new Error('empty');
    return { kind: 'screenshot', path: file, name: path.basename(file) };
  } catch {
    fs.rmSync(file, { force: true });
    return null;
  }
}
