/**
 * Reads the status stream of `am instrument -r -w` into test cases, as it arrives, so that a run
 * that is stopped or whose app dies keeps what was reported so far. Pure: no device, no clock
 * other than the one it is given.
 *
 * The stream is a sequence of bundles. `INSTRUMENTATION_STATUS: key=value` lines fill a status
 * bundle (a value runs on over the following lines until the next `INSTRUMENTATION_` line: stack
 * traces do) and `INSTRUMENTATION_STATUS_CODE: n` closes it: 1 a test started, 0 it passed, -1 an
 * error, -2 a failed assertion, -3 ignored, -4 an assumption failed. `INSTRUMENTATION_RESULT:`
 * lines and `INSTRUMENTATION_CODE: n` end the run; a crash shows as `shortMsg=Process crashed.`
 * there, and a test that started without ending is the one the crash took down.
 */
import type { TestCase } from '../../../domain/test-cases.ts';

export interface InstrumentationReport {
  readonly testCases: readonly TestCase[];
  /** Why the run as a whole went wrong (a crash, no such instrumentation, output cut short); null when it ran through. */
  readonly runFailure: string | null;
  /** The app process died during the run. */
  readonly crashed: boolean;
  /** The test that was running when the output ended, if any; it is among the test cases as FAILED. */
  readonly interrupted: { readonly className: string; readonly methodName: string } | null;
  /** `numtests` as the runner announced it. */
  readonly announced: number | null;
}

const STATUS = 'INSTRUMENTATION_STATUS: ';
const STATUS_CODE = 'INSTRUMENTATION_STATUS_CODE: ';
const RESULT = 'INSTRUMENTATION_RESULT: ';
const CODE = 'INSTRUMENTATION_CODE: ';
const FAILED = 'INSTRUMENTATION_FAILED: ';
const ABORTED = 'INSTRUMENTATION_ABORTED: ';
const ON_ERROR = 'onError: ';

/** `shortMsg` values that mean the process under test died rather than the runner reporting a problem. */
const CRASH_MESSAGES = /crash|died|native crash|killed/i;

interface Started {
  readonly className: string;
  readonly methodName: string;
  readonly at: number;
}

export class InstrumentationParser {
  private partial = '';
  private bundle = new Map<string, string>();
  private result = new Map<string, string>();
  /** Where continuation lines go: the value being read, in the status or the result bundle. */
  private open: { readonly target: Map<string, string>; readonly key: string } | null = null;
  private readonly cases: TestCase[] = [];
  private started: Started | null = null;
  private ended = false;
  private failure: string | null = null;
  private aborted: string | null = null;
  private announced: number | null = null;
  private readonly stray: string[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** Feeds output; answers the test cases that finished within it (to react to a failure as it happens). */
  push(text: string): TestCase[] {
    const before = this.cases.length;
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line.endsWith('\r') ? line.slice(0, -1) : line);
    return this.cases.slice(before);
  }

  /** The output has ended (or was cut off): what the run came to. */
  end(): InstrumentationReport {
    if (this.partial !== '') this.line(this.partial);
    this.partial = '';
    const shortMsg = this.result.get('shortMsg')?.trim() ?? null;
    const longMsg = this.result.get('longMsg')?.trim() ?? null;
    const crashed =
      this.aborted !== null ||
      (shortMsg !== null && CRASH_MESSAGES.test(shortMsg)) ||
      (this.started !== null && !this.ended);
    let runFailure = this.failure;
    if (runFailure === null && (shortMsg !== null || this.aborted !== null)) {
      runFailure = `${crashed ? 'the app crashed' : 'the instrumentation failed'}: ${[this.aborted, shortMsg, longMsg].filter((part) => part !== null && part !== '').join(' ')}`;
    }
    if (runFailure === null && !this.ended) {
      const said = this.stray.join('\n').trim();
      runFailure = `the instrumentation output ended before the run did${said === '' ? ' (the app process or the device went away)' : `: ${said.slice(0, 500)}`}`;
    }
    let interrupted: InstrumentationReport['interrupted'] = null;
    if (this.started !== null) {
      const { className, methodName, at } = this.started;
      interrupted = { className, methodName };
      this.cases.push(
        testCase(
          className,
          methodName,
          this.now() - at,
          'FAILED',
          `the test did not finish: ${runFailure ?? 'the app process died'}`,
          null,
        ),
      );
      this.started = null;
    }
    return { testCases: [...this.cases], runFailure, crashed, interrupted, announced: this.announced };
  }

  private line(line: string): void {
    if (line.startsWith(STATUS)) this.keyValue(this.bundle, line.slice(STATUS.length));
    else if (line.startsWith(STATUS_CODE)) this.status(Number.parseInt(line.slice(STATUS_CODE.length), 10));
    else if (line.startsWith(RESULT)) this.keyValue(this.result, line.slice(RESULT.length));
    else if (line.startsWith(CODE)) {
      this.open = null;
      this.ended = true;
    } else if (line.startsWith(FAILED)) {
      this.open = null;
      this.failure = `the instrumentation could not start: ${line.slice(FAILED.length).trim()}`;
    } else if (line.startsWith(ABORTED)) {
      this.open = null;
      this.aborted = line.slice(ABORTED.length).trim();
    } else if (line.startsWith(ON_ERROR)) {
      this.open = null;
      this.failure = `the instrumentation could not start: ${line
        .slice(ON_ERROR.length)
        .replace(/^commandError=\w+\s+message=/, '')
        .trim()}`;
    } else if (this.open !== null) {
      const { target, key } = this.open;
      target.set(key, `${target.get(key)}\n${line}`);
    } else if (line.trim() !== '') this.stray.push(line);
  }

  private keyValue(target: Map<string, string>, text: string): void {
    const at = text.indexOf('=');
    const key = at < 0 ? text : text.slice(0, at);
    target.set(key, at < 0 ? '' : text.slice(at + 1));
    this.open = { target, key };
  }

  private status(code: number): void {
    const bundle = this.bundle;
    this.bundle = new Map();
    this.open = null;
    const numtests = Number.parseInt(bundle.get('numtests') ?? '', 10);
    if (Number.isSafeInteger(numtests)) this.announced = numtests;
    const className = bundle.get('class');
    const methodName = bundle.get('test');
    if (className === undefined || methodName === undefined) {
      // A bundle about the run rather than a test, e.g. `Error=Unable to find instrumentation info`.
      const error = bundle.get('Error') ?? bundle.get('stream');
      if (code < 0 && error !== undefined && error.trim() !== '')
        this.failure = `the instrumentation reported an error: ${error.trim()}`;
      return;
    }
    if (code === 1) {
      this.started = { className, methodName, at: this.now() };
      return;
    }
    const started =
      this.started !== null && this.started.className === className && this.started.methodName === methodName
        ? this.started
        : null;
    if (started !== null) this.started = null;
    const duration = started === null ? 0 : this.now() - started.at;
    const stack = bundle.get('stack')?.trim() || null;
    const firstLine = stack?.split('\n', 1)[0]?.trim() ?? null;
    switch (code) {
      case 0:
        this.cases.push(testCase(className, methodName, duration, 'PASSED', null, null));
        break;
      case -1:
      case -2:
        this.cases.push(
          testCase(
            className,
            methodName,
            duration,
            'FAILED',
            firstLine ?? (code === -1 ? 'the test ended with an error' : 'the test failed'),
            stack,
          ),
        );
        break;
      case -3:
        this.cases.push(testCase(className, methodName, duration, 'SKIPPED', null, null));
        break;
      case -4:
        this.cases.push(
          testCase(
            className,
            methodName,
            duration,
            'SKIPPED',
            firstLine === null ? 'an assumption failed' : `assumption failed: ${firstLine}`,
            stack,
          ),
        );
        break;
      default:
        this.stray.push(`unknown status code ${code} for ${className}#${methodName}`);
    }
  }
}

/** Parses a complete recording at once (tests and tools; the driver streams). */
export function parseInstrumentation(output: string): InstrumentationReport {
  const parser = new InstrumentationParser(() => 0);
  parser.push(output);
  return parser.end();
}

function testCase(
  className: string,
  methodName: string,
  duration: number,
  result: TestCase['result'],
  errorMessage: string | null,
  stacktrace: string | null,
): TestCase {
  const dot = className.lastIndexOf('.');
  return {
    suiteName: dot < 0 ? className : className.slice(dot + 1),
    className,
    methodName,
    duration: Math.max(0, duration),
    result,
    errorMessage,
    stacktrace,
  };
}
