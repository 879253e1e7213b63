/**
 * Turns `devicecloud run` arguments into a run to start: checks the local files, and resolves the
 * framework and the device group or devices by name or id against what the server offers, with
 * close matches named when a name is unknown. Everything here fails with exit code 3.
 */
import fs from 'node:fs';
import path from 'node:path';
import { distance } from 'fastest-levenshtein';
import type { ApiDevice, ApiDeviceGroup, ApiFramework } from '../client/api-types.ts';
import { CliError } from './cli-error.ts';

export type OsType = 'ANDROID' | 'IOS';

const APP_EXTENSIONS: Readonly<Record<string, OsType>> = { '.apk': 'ANDROID', '.ipa': 'IOS' };

/** A readable regular file, or a clear error naming the option. */
export function checkFile(option: string, file: string): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new CliError(`${option} ${file}: no such file`);
  }
  if (!stat.isFile()) throw new CliError(`${option} ${file}: not a file`);
  try {
    fs.accessSync(file, fs.constants.R_OK);
  } catch {
    throw new CliError(`${option} ${file}: not readable`);
  }
  return file;
}

export function osTypeOfApp(app: string): OsType {
  const osType = APP_EXTENSIONS[path.extname(app).toLowerCase()];
  if (osType === undefined) throw new CliError(`--app ${app}: an app is an .apk (Android) or .ipa (iOS) file`);
  return osType;
}

export function checkTests(tests: string): void {
  const extension = path.extname(tests).toLowerCase();
  if (extension !== '.zip' && extension !== '.apk' && extension !== '.ipa') {
    throw new CliError(
      `--tests ${tests}: tests are a .zip (with run-tests.sh, or for XCTest/Calabash), a test .apk or an XCUITest runner .ipa`,
    );
  }
}

/** `K=V` run parameters, handed to the tests as environment variables. */
export function parseParams(params: readonly string[]): Array<{ key: string; value: string }> {
  return params.map((param) => {
    const at = param.indexOf('=');
    if (at <= 0) throw new CliError(`--param ${param}: expected KEY=VALUE`);
    return { key: param.slice(0, at), value: param.slice(at + 1) };
  });
}

export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new CliError(`--timeout ${value}: expected a number of seconds`);
  return Number(value);
}

/** The framework named by id or name, or the one the files suggest. */
export function chooseFramework(
  frameworks: readonly ApiFramework[],
  osType: OsType,
  request: { framework?: string; crawler: boolean; tests?: string },
): ApiFramework {
  const usable = frameworks.filter((framework) => framework.osType === osType);
  if (request.framework !== undefined) {
    const wanted = request.framework;
    const found = /^\d+$/.test(wanted)
      ? usable.find((framework) => framework.id === Number(wanted))
      : byName(usable, wanted, (framework) => framework.name);
    if (found === undefined) {
      throw new CliError(
        `--framework ${wanted}: no ${osType} framework of that id or name${suggest(
          usable.map((framework) => `${framework.id} ${framework.name}`),
          wanted,
        )}`,
      );
    }
    if (!found.available)
      throw new CliError(`--framework ${wanted}: ${found.name} cannot be used: ${found.unavailableReason}`);
    return found;
  }
  const type = request.crawler
    ? 'CRAWLER'
    : request.tests === undefined
      ? undefined
      : path.extname(request.tests).toLowerCase() === '.zip'
        ? 'SERVER_SIDE'
        : osType === 'ANDROID'
          ? 'INSTRUMENTATION'
          : 'XCUITEST';
  if (type === undefined) throw new CliError('Give --tests FILE, or --crawler to let the service explore the app');
  const found = usable.find((framework) => framework.type === type && framework.available);
  if (found === undefined)
    throw new CliError(
      `The server offers no ${osType} framework of type ${type}; choose one with --framework (devicecloud frameworks lists them)`,
    );
  return found;
}

/** The group named by id or name among the user's and the public groups of the OS. */
export function chooseGroup(groups: readonly ApiDeviceGroup[], osType: OsType, wanted: string): ApiDeviceGroup {
  const suitable = groups.filter((group) => group.osType === osType);
  const found = /^\d+$/.test(wanted)
    ? groups.find((group) => group.id === Number(wanted))
    : byName(suitable, wanted, (group) => group.displayName);
  if (found === undefined) {
    throw new CliError(
      `--group ${wanted}: no ${osType} device group of that id or name${suggest(
        suitable.map((group) => group.displayName),
        wanted,
      )}`,
    );
  }
  if (found.osType !== osType)
    throw new CliError(
      `--group ${wanted}: '${found.displayName}' holds ${found.osType} devices, but the app is for ${osType}`,
    );
  if (found.deviceCount === 0) throw new CliError(`--group ${wanted}: '${found.displayName}' has no devices`);
  return found;
}

export function chooseDevices(devices: readonly ApiDevice[], osType: OsType, wanted: string): number[] {
  const ids = wanted.split(',').map((part) => part.trim());
  return ids.map((id) => {
    const device = /^\d+$/.test(id) ? devices.find((candidate) => candidate.id === Number(id)) : undefined;
    if (device === undefined)
      throw new CliError(`--devices ${wanted}: no device with id '${id}' (devicecloud devices lists them)`);
    if (device.osType !== osType)
      throw new CliError(
        `--devices ${wanted}: device ${id} (${device.displayName}) is ${device.osType}, but the app is for ${osType}`,
      );
    return device.id;
  });
}

function byName<T>(items: readonly T[], wanted: string, name: (item: T) => string): T | undefined {
  const lower = wanted.toLowerCase();
  const exact = items.filter((item) => name(item).toLowerCase() === lower);
  if (exact.length === 1) return exact[0];
  const partial = items.filter((item) => name(item).toLowerCase().includes(lower));
  return partial.length === 1 ? partial[0] : undefined;
}

/** "; did you mean: a, b" with the names closest to `wanted`. */
function suggest(names: readonly string[], wanted: string): string {
  if (names.length === 0) return '';
  const ranked = [...names].sort(
    (a, b) => distance(a.toLowerCase(), wanted.toLowerCase()) - distance(b.toLowerCase(), wanted.toLowerCase()),
  );
  return `; did you mean: ${ranked
    .slice(0, 3)
    .map((name) => `'${name}'`)
    .join(', ')}?`;
}
