/**
 * Finds app crashes and ANRs in `logcat -v threadtime` output, line by line as it streams. A
 * crash is `FATAL EXCEPTION` from AndroidRuntime followed by `Process: <package>, PID: n` and the
 * stack trace on the lines of the same pid; an ANR is ActivityManager's `ANR in <package>` and
 * its `Reason:` line. Pure: the capture itself is in monitors.ts.
 */

export interface AppProblem {
  readonly kind: 'crash' | 'anr';
  readonly packageName: string;
  /** The exception line, or the ANR's reason. */
  readonly message: string;
  readonly stacktrace: string | null;
  /** Which line of the capture it started on (for "since the visit began"). */
  readonly line: number;
}

/** date time pid tid level tag: message */
const THREADTIME = /^\S+\s+\S+\s+(\d+)\s+(\d+)\s+([VDIWEFA])\s+(.*?)\s*: (.*)$/;

interface Entry {
  readonly pid: number;
  readonly tag: string;
  readonly message: string;
}

export function parseThreadtime(line: string): Entry | null {
  const match = THREADTIME.exec(line);
  return match === null ? null : { pid: Number(match[1]), tag: match[4]!, message: match[5]! };
}

export class CrashDetector {
  private lines = 0;
  private crash: { pid: number; packageName: string | null; body: string[]; line: number } | null = null;
  private anr: { packageName: string; reason: string | null; line: number } | null = null;
  private readonly found: AppProblem[] = [];

  constructor(private readonly onProblem: (problem: AppProblem) => void = () => undefined) {}

  get problems(): readonly AppProblem[] {
    return this.found;
  }

  /** Line count so far: a mark to ask for problems that came later. */
  get mark(): number {
    return this.lines;
  }

  since(mark: number, packageName: string): AppProblem[] {
    return this.found.filter((problem) => problem.line >= mark && problem.packageName === packageName);
  }

  push(line: string): void {
    const at = this.lines++;
    const entry = parseThreadtime(line.trimEnd());
    if (this.crash !== null && (entry === null || entry.pid !== this.crash.pid || entry.tag !== 'AndroidRuntime'))
      this.closeCrash();
    if (this.anr !== null && (entry === null || entry.tag !== 'ActivityManager' || entry.message.startsWith('ANR in ')))
      this.closeAnr();
    if (entry === null) return;
    if (entry.tag === 'AndroidRuntime') {
      if (entry.message.startsWith('FATAL EXCEPTION'))
        this.crash = { pid: entry.pid, packageName: null, body: [], line: at };
      else if (this.crash !== null) {
        const process = /^Process: ([^,\s]+)/.exec(entry.message);
        if (process !== null && this.crash.packageName === null) this.crash.packageName = process[1]!;
        else this.crash.body.push(entry.message);
      }
    } else if (entry.tag === 'ActivityManager') {
      const anr = /^ANR in (\S+)/.exec(entry.message);
      if (anr !== null) this.anr = { packageName: anr[1]!, reason: null, line: at };
      else if (this.anr !== null && entry.message.startsWith('Reason:'))
        this.anr.reason = entry.message.slice('Reason:'.length).trim();
    }
  }

  /** The capture ended: what was still being read counts. */
  end(): void {
    this.closeCrash();
    this.closeAnr();
  }

  private closeCrash(): void {
    const crash = this.crash;
    this.crash = null;
    if (crash === null || crash.packageName === null) return;
    const stacktrace = crash.body.join('\n').trim();
    this.report({
      kind: 'crash',
      packageName: crash.packageName,
      message: crash.body[0]?.trim() ?? 'FATAL EXCEPTION',
      stacktrace: stacktrace === '' ? null : stacktrace,
      line: crash.line,
    });
  }

  private closeAnr(): void {
    const anr = this.anr;
    this.anr = null;
    if (anr === null) return;
    this.report({
      kind: 'anr',
      packageName: anr.packageName,
      message: `the app is not responding${anr.reason === null ? '' : `: ${anr.reason}`}`,
      stacktrace: null,
      line: anr.line,
    });
  }

  private report(problem: AppProblem): void {
    this.found.push(problem);
    this.onProblem(problem);
  }
}
