/**
 * Readers of what Android's command-line tools print, kept pure so that each format (and each
 * Android version's variant of it) is pinned by a unit test against recorded output.
 */

/** `dumpsys meminfo <package>`: the process and its total PSS in kilobytes, or null when it does not run. */
export function parseMeminfo(output: string): { pid: number; pssKb: number } | null {
  const header = /\*\* MEMINFO in pid (\d+) \[/.exec(output);
  if (header === null) return null;
  // Android 11+ prints "TOTAL PSS:", 6-10 "TOTAL:" in the App Summary; the table's TOTAL row is in all of them.
  const total =
    /TOTAL PSS:\s+(\d+)/.exec(output) ?? /^\s*TOTAL:\s+(\d+)/m.exec(output) ?? /^\s*TOTAL\s+(\d+)/m.exec(output);
  if (total === null) return null;
  return { pid: Number(header[1]), pssKb: Number(total[1]) };
}

/**
 * `top -n 1` output: the CPU share of one process, 0..1 of the whole device. toybox's top
 * (Android 8+) prints a `800%cpu` summary and %CPU per process against one core; toolbox's top
 * (Android 7 and older) prints CPU% against the whole device already.
 */
export function parseTopCpu(output: string, pid: number): number | null {
  const lines = output.split('\n').map((line) => line.trimEnd());
  const capacity = Number(/(\d+)%cpu/.exec(output)?.[1] ?? 100);
  const headerAt = lines.findIndex((line) => /\bPID\b/.test(line) && /%CPU|CPU%/.test(line));
  if (headerAt < 0) return null;
  // toybox marks the sort column with brackets and glues it to its neighbour: "S[%CPU]".
  const columns = lines[headerAt]!.replace(/[[\]]/g, ' ').trim().split(/\s+/);
  const cpuColumn = columns.findIndex((column) => column === '%CPU' || column === 'CPU%');
  const pidColumn = columns.indexOf('PID');
  for (const line of lines.slice(headerAt + 1)) {
    const fields = line.trim().split(/\s+/);
    if (Number(fields[pidColumn]) !== pid) continue;
    const value = Number.parseFloat(fields[cpuColumn]?.replace('%', '') ?? '');
    if (!Number.isFinite(value) || capacity <= 0) return null;
    return Math.min(1, Math.max(0, Math.round((value / capacity) * 1000) / 1000));
  }
  return null;
}

/** `dumpsys battery`: charge level in percent and temperature in °C. */
export function parseBattery(output: string): { level: number | null; temperatureC: number | null } {
  const level = /^\s*level:\s*(\d+)/m.exec(output);
  const temperature = /^\s*temperature:\s*(-?\d+)/m.exec(output);
  return {
    level: level === null ? null : Number(level[1]),
    temperatureC: temperature === null ? null : Number(temperature[1]) / 10,
  };
}

/** `pm list packages` (also `pm list instrumentation`-style `prefix:` lists). */
export function parsePackageList(output: string): string[] {
  return output
    .split('\n')
    .map((line) => /^package:(\S+)/.exec(line.trim())?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
}

/** `pm list instrumentation`: test package → runner class (and the package it targets). */
export function parseInstrumentationList(
  output: string,
): Array<{ testPackage: string; runner: string; target: string | null }> {
  const found = [];
  for (const line of output.split('\n')) {
    const match = /^instrumentation:([^/\s]+)\/(\S+)\s*(?:\(target=([^)]+)\))?/.exec(line.trim());
    if (match !== null)
      found.push({
        testPackage: match[1]!,
        runner: match[2]!.startsWith('.') ? match[1]! + match[2]! : match[2]!,
        target: match[3] ?? null,
      });
  }
  return found;
}

export interface MonkeyOutcome {
  readonly injected: number | null;
  readonly finished: boolean;
  /** A crash or ANR of the app that monkey saw, with what it printed about it. */
  readonly problem: {
    readonly kind: 'crash' | 'anr';
    readonly message: string;
    readonly stacktrace: string | null;
  } | null;
}

/** `monkey -v` output. */
export function parseMonkey(output: string): MonkeyOutcome {
  const lines = output.split('\n').map((line) => line.trimEnd());
  const injected = /Events injected: (\d+)/.exec(output);
  let problem: MonkeyOutcome['problem'] = null;
  const crashAt = lines.findIndex((line) => line.startsWith('// CRASH:'));
  const anrAt = lines.findIndex((line) => line.startsWith('// NOT RESPONDING:'));
  if (crashAt >= 0) {
    const details = lines
      .slice(crashAt + 1)
      .filter((line) => line.startsWith('//'))
      .map((line) => line.replace(/^\/\/ ?/, ''));
    const long = details
      .find((line) => line.startsWith('Long Msg:'))
      ?.slice('Long Msg:'.length)
      .trim();
    const stack = details
      .filter((line) => !/^(Short Msg|Long Msg|Build Label|Build Changelist|Build Time):/.test(line))
      .join('\n')
      .trim();
    problem = {
      kind: 'crash',
      message: long ?? lines[crashAt]!.slice(3).trim(),
      stacktrace: stack === '' ? null : stack,
    };
  } else if (anrAt >= 0) {
    const reason = lines.slice(anrAt + 1).find((line) => line.startsWith('Reason:'));
    problem = {
      kind: 'anr',
      message: `${lines[anrAt]!.slice(3).trim()}${reason === undefined ? '' : ` (${reason})`}`,
      stacktrace: null,
    };
  }
  return {
    injected: injected === null ? null : Number(injected[1]),
    finished: /\/\/ Monkey finished/.test(output),
    problem,
  };
}

/** `am start -W -n …`: an error line when the activity could not be started, else null. */
export function amStartError(output: string): string | null {
  const error = output
    .split('\n')
    .find(
      (line) =>
        /^(Error|Exception|java\.lang\.\w+(Exception|Error)):?/.test(line.trim()) ||
        /^Status: (?!ok)/.test(line.trim()),
    );
  return error === undefined ? null : error.trim();
}

export interface DeviceAccount {
  readonly name: string;
  /** The authenticator's account type: `com.google` for Google accounts. */
  readonly type: string;
}

/**
 * `dumpsys account`: the accounts of the phone's owner (user 0), from its `Accounts: N` section
 * (`Account {name=…, type=…}` lines). Null when the output has no such section (a refused dump).
 */
export function parseAccounts(output: string): DeviceAccount[] | null {
  const lines = output.split('\n').map((line) => line.trimEnd());
  // One `User UserInfo{<id>:…}:` block per user (work profiles, guests); older builds print none.
  const ownerAt = lines.findIndex((line) => line.trim().startsWith('User UserInfo{0:'));
  const headerAt = lines.findIndex((line, at) => at > ownerAt && /^\s*Accounts: \d+$/.test(line));
  if (headerAt < 0) return null;
  const accounts: DeviceAccount[] = [];
  for (const line of lines.slice(headerAt + 1)) {
    const match = /^\s*Account \{name=(.*), type=([^,}]*)\}$/.exec(line);
    if (match === null) break;
    accounts.push({ name: match[1]!, type: match[2]! });
  }
  return accounts;
}
