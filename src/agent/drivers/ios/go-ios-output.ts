/**
 * What go-ios (1.2.x) prints, read without trusting it. Command results are JSON on stdout
 * (`convertToJSONString` in go-ios' main.go); everything else is its log, one slog JSON object a line
 * on stderr (`{"time":…,"level":"INFO","msg":…, …attributes}`), including what some commands
 * only report there: the XCTest results (`msg: "test results"`), CPU samples, saved files. Failures
 * are an ERROR line followed by exit code 1, except `reboot`, which logs its error and exits 0,
 * so callers look at both. Pure functions: test/unit/ios-go-ios-output.test.ts.
 */
import type { TestCase } from '../../../domain/test-cases.ts';

export interface LogLine {
  /** DEBUG, INFO, WARN, ERROR, TRACE; TEXT for a line that is not JSON (a panic, `--nojson` output). */
  readonly level: string;
  readonly msg: string;
  readonly attrs: Readonly<Record<string, unknown>>;
}

export function parseLogLine(line: string): LogLine | null {
  const text = line.trim();
  if (text === '') return null;
  if (text.startsWith('{')) {
    try {
      const { level, msg, time: _time, ...attrs } = JSON.parse(text) as Record<string, unknown>;
      if (typeof level === 'string' && typeof msg === 'string') return { level, msg, attrs };
    } catch {
      // Not one of its log lines; kept as text below.
    }
  }
  return { level: 'TEXT', msg: text, attrs: {} };
}

export function parseLogLines(text: string): LogLine[] {
  return text
    .split('\n')
    .map(parseLogLine)
    .filter((line): line is LogLine => line !== null);
}

/** The last error go-ios logged, as `message: cause`; null when it logged none. */
export function errorOf(lines: readonly LogLine[]): string | null {
  const error = lines.findLast((line) => line.level === 'ERROR');
  if (error === undefined) return null;
  const cause = error.attrs.err ?? error.attrs.error;
  return cause === undefined ? error.msg : `${error.msg}: ${String(cause)}`;
}

export interface ListedDevice {
  readonly udid: string;
  /** e.g. iPhone15,4; empty when go-ios listed the device without details. */
  readonly productType: string;
  /** The iOS version, e.g. 17.4.1. */
  readonly productVersion: string;
  /** USB or Network. */
  readonly connectionType: string;
}

/** `ios list --details`: `{"deviceList":[{"Udid","ProductName","ProductType","ProductVersion","ConnectionType"}]}`. */
export function parseDeviceList(stdout: string): ListedDevice[] {
  const parsed = jsonObject(stdout, 'ios list');
  const list = parsed.deviceList;
  if (list === null) return [];
  if (!Array.isArray(list)) throw new Error('ios list printed no deviceList');
  return list
    .map((entry) => {
      // Without --details go-ios lists bare UDIDs.
      if (typeof entry === 'string') return { udid: entry, productType: '', productVersion: '', connectionType: '' };
      const device = entry as Record<string, unknown>;
      return {
        udid: String(device.Udid ?? ''),
        productType: String(device.ProductType ?? ''),
        productVersion: String(device.ProductVersion ?? ''),
        connectionType: String(device.ConnectionType ?? ''),
      };
    })
    .filter((device) => device.udid !== '');
}

/** `ios info`: the device's lockdown values, of which the model and iOS version matter here. */
export function parseDeviceInfo(udid: string, stdout: string): ListedDevice {
  const info = jsonObject(stdout, 'ios info');
  if (typeof info.ProductVersion !== 'string') throw new Error('ios info printed no ProductVersion');
  return { udid, productType: String(info.ProductType ?? ''), productVersion: info.ProductVersion, connectionType: '' };
}

export interface InstalledApp {
  readonly bundleId: string;
  readonly name: string;
  readonly version: string;
  readonly executable: string;
}

/** `ios apps`: a JSON array of installation_proxy dictionaries (the apps' Info.plist keys and more). */
export function parseApps(stdout: string): InstalledApp[] {
  const parsed = JSON.parse(stdout.trim() || 'null') as unknown;
  if (parsed === null) return [];
  if (!Array.isArray(parsed)) throw new Error('ios apps did not print a list of apps');
  return parsed
    .map((entry) => entry as Record<string, unknown>)
    .map((app) => ({
      bundleId: String(app.CFBundleIdentifier ?? ''),
      name: String(app.CFBundleDisplayName ?? app.CFBundleName ?? ''),
      version: String(app.CFBundleShortVersionString ?? ''),
      executable: String(app.CFBundleExecutable ?? ''),
    }))
    .filter((app) => app.bundleId !== '');
}

export interface Language {
  readonly language: string;
  readonly locale: string;
}

/** `ios lang`: `{"Language":"en","Locale":"en_US"}`. */
export function parseLanguage(stdout: string): Language {
  const parsed = jsonObject(stdout, 'ios lang');
  if (typeof parsed.Language !== 'string' || typeof parsed.Locale !== 'string')
    throw new Error('ios lang printed no Language and Locale');
  return { language: parsed.Language, locale: parsed.Locale };
}

/** `ios crash ls <pattern>`: `{"files":["Sample-2026-01-01-120000.ips"],"length":1}`. */
export function parseCrashList(stdout: string): string[] {
  const parsed = jsonObject(stdout, 'ios crash ls');
  return Array.isArray(parsed.files) ? parsed.files.map(String) : [];
}

/**
 * A CPU sample from `ios sysmontap`, 0..1 of the device's capacity. go-ios prints only the
 * device's total load (`cpu_total_load`, the sum over its cores in percent, like Xcode's gauge),
 * so it is divided by the enabled cores. Not per app, and without memory: go-ios 1.2 offers none.
 */
export function cpuSampleOf(line: LogLine): number | null {
  if (line.msg !== 'received CPU usage data') return null;
  const load = Number(line.attrs.cpu_total_load);
  const cores = Number(line.attrs.enabled_cpus ?? line.attrs.cpu_count);
  if (!Number.isFinite(load) || load < 0 || !Number.isFinite(cores) || cores <= 0) return null;
  return Math.min(1, load / (100 * cores));
}

/** `ios syslog` prints `{"msg":"<the raw syslog line>"}` a line. */
export function syslogMessageOf(line: string): string {
  const text = line.trimEnd();
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as { msg?: unknown };
      if (typeof parsed.msg === 'string') return parsed.msg;
    } catch {
      // Printed as is below.
    }
  }
  return text;
}

export interface TestAttachment {
  /** Where go-ios wrote it on this host (under the TMPDIR it ran with). */
  readonly path: string;
  readonly name: string;
  /** e.g. public.png. */
  readonly uniformTypeIdentifier: string;
}

export interface TestRun {
  readonly testCases: TestCase[];
  readonly attachments: TestAttachment[];
}

/**
 * The results of `ios runtest`/`ios runxctest --log-output=…`: go-ios logs its listener's suites
 * as `{"msg":"test results","results":[TestSuite…]}` (testmanagerd/testlistener.go; Go field
 * names, durations in nanoseconds). Statuses are Apple's (passed, failed, skipped, expected
 * failure) plus go-ios' own `stalled`; a test that started and never finished (the app or the
 * runner died) has none. Null when go-ios logged no results, or `null` ones (the run failed before
 * it began: go-ios then logs "Failed running Xcuitest" and still exits 0).
 */
export function testRunOf(lines: readonly LogLine[]): TestRun | null {
  const line = lines.findLast(
    (candidate) => candidate.msg === 'test results' && Array.isArray(candidate.attrs.results),
  );
  if (line === undefined) return null;
  const suites = line.attrs.results as Record<string, unknown>[];
  const testCases: TestCase[] = [];
  const attachments: TestAttachment[] = [];
  for (const suite of suites) {
    const cases = Array.isArray(suite.TestCases) ? (suite.TestCases as Record<string, unknown>[]) : [];
    for (const testCase of cases) {
      const error = (testCase.Err ?? {}) as Record<string, unknown>;
      const message = typeof error.Message === 'string' && error.Message !== '' ? error.Message : null;
      const location =
        typeof error.File === 'string' && error.File !== '' ? `${error.File}:${Number(error.Line ?? 0)}` : null;
      const status = String(testCase.Status ?? '');
      const result = resultOf(status);
      testCases.push({
        suiteName: typeof suite.Name === 'string' ? suite.Name : null,
        className: String(testCase.ClassName ?? ''),
        methodName: String(testCase.MethodName ?? ''),
        duration: Math.round(Number(testCase.Duration ?? 0) / 1e6),
        result,
        errorMessage: result === 'PASSED' ? null : (message ?? defaultMessage(status)),
        stacktrace: result === 'FAILED' ? location : null,
      });
      for (const attachment of Array.isArray(testCase.Attachments)
        ? (testCase.Attachments as Record<string, unknown>[])
        : []) {
        if (typeof attachment.Path !== 'string') continue;
        attachments.push({
          path: attachment.Path,
          name: String(attachment.Name ?? ''),
          uniformTypeIdentifier: String(attachment.UniformTypeIdentifier ?? ''),
        });
      }
    }
  }
  return { testCases, attachments };
}

function resultOf(status: string): TestCase['result'] {
  switch (status) {
    case 'passed':
    case 'expected failure':
      return 'PASSED';
    case 'skipped':
      return 'SKIPPED';
    default:
      return 'FAILED';
  }
}

function defaultMessage(status: string): string | null {
  if (status === 'skipped') return null;
  if (status === 'stalled') return 'the test stalled';
  if (status === '') return 'the test did not finish: the app or the test runner stopped while it ran';
  return `the test ended ${status}`;
}

/** Why `ios runtest` did not run (all of) the tests: it logs this at INFO and still exits 0. */
export function testRunFailureOf(lines: readonly LogLine[]): string | null {
  const failure = lines.findLast((line) => /^Failed running (Xcuitest|Xctest)$/i.test(line.msg));
  if (failure !== undefined)
    return `${failure.msg}: ${String(failure.attrs.error ?? failure.attrs.err ?? 'unknown error')}`;
  return errorOf(lines);
}

function jsonObject(stdout: string, command: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout.trim());
  } catch {
    throw new Error(`${command} printed no JSON: ${stdout.trim().slice(0, 200) || '(nothing)'}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${command} printed no JSON object`);
  return parsed as Record<string, unknown>;
}
