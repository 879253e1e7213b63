/**
 * What the agent records from the device while a run's tests or crawl go on: the device log
 * (`ios syslog`, capped), CPU samples (`ios sysmontap`), and crash reports of the app that appeared
 * during the run (`ios crash ls|cp`), which are how a crash is told from a test failure.
 *
 * go-ios 1.2's sysmontap prints the device's total CPU load only: the samples are the device's,
 * not the app's, and carry no memory figure (memUsage null), for want of one from go-ios.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Artifact, ExecutionContext } from '../../driver.ts';
import { type GoIos, udidArg } from './go-ios.ts';
import { cpuSampleOf, syslogMessageOf } from './go-ios-output.ts';

export const LOG_LIMIT_BYTES = 10 * 1024 * 1024;

export interface Recording {
  /** Ends the streams; answers the device log. */
  stop(): Promise<Artifact[]>;
}

export function startRecording(goIos: GoIos, udid: string, workDir: string, context: ExecutionContext): Recording {
  const logFile = path.join(workDir, 'logs', 'device.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = fs.createWriteStream(logFile);
  let written = 0;
  const syslog = goIos.start(['syslog', udidArg(udid)], {
    onStdoutLine: (line) => {
      if (written >= LOG_LIMIT_BYTES) return;
      const text = `${syslogMessageOf(line)}\n`;
      written += Buffer.byteLength(text);
      log.write(written >= LOG_LIMIT_BYTES ? `[device log truncated after ${LOG_LIMIT_BYTES} bytes]\n` : text);
    },
  });
  const sysmontap = goIos.start(['sysmontap', udidArg(udid)], {
    onLogLine: (line) => {
      const cpu = cpuSampleOf(line);
      if (cpu !== null) context.sample({ timestamp: Date.now(), cpuUsage: cpu, memUsage: null, packageName: null });
    },
  });
  return {
    async stop() {
      await Promise.all([syslog.stop(), sysmontap.stop()]);
      await new Promise<void>((resolve) => log.end(resolve));
      return [{ kind: 'log', path: logFile, name: 'device.log' }];
    },
  };
}

export interface CrashWatch {
  /** Crash reports of the app that appeared since the watch began, copied into the work dir. */
  collect(): Promise<{ names: string[]; artifacts: Artifact[] }>;
}

/**
 * Crash reports are named after the process (`<Executable>-<date>.ips`); those already there are
 * old. A device whose crash reports cannot be listed runs without crash detection rather than not
 * at all: its crashes still fail the tests, only without the report.
 */
export async function watchCrashes(
  goIos: GoIos,
  udid: string,
  executable: string,
  workDir: string,
): Promise<CrashWatch> {
  const pattern = `${executable}*`;
  const before =
    executable === ''
      ? null
      : await goIos.crashReports(udid, pattern).then(
          (names) => new Set(names),
          () => null,
        );
  const taken = new Set<string>();
  return {
    async collect() {
      if (before === null) return { names: [], artifacts: [] };
      const now = await goIos.crashReports(udid, pattern).catch(() => [] as string[]);
      const fresh = now.filter((name) => !before.has(name) && !taken.has(name));
      const dir = path.join(workDir, 'crashes');
      const artifacts: Artifact[] = [];
      for (const name of fresh) {
        taken.add(name);
        fs.mkdirSync(dir, { recursive: true });
        try {
          await goIos.copyCrashReports(udid, path.basename(name), dir);
        } catch {
          // Known from the listing even when the copy fails; the name is still reported.
          continue;
        }
        const file = findCopied(dir, path.basename(name));
        if (file !== null) artifacts.push({ kind: 'output', path: file, name: `crash-${path.basename(name)}` });
      }
      return { names: fresh.map((name) => path.basename(name)), artifacts };
    },
  };
}

/** `ios crash cp` keeps the device's folder structure under the target. */
function findCopied(dir: string, name: string): string | null {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name === name) return full;
    if (entry.isDirectory()) {
      const found = findCopied(full, name);
      if (found !== null) return found;
    }
  }
  return null;
}
