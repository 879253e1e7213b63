/**
 * The fake phone's shell: just enough of `sh` (quotes, `&&`, `;`, redirections to /dev/null) and
 * of the Android tools the driver and adbkit use, answering with recorded output and changing
 * the device's state as the real tools would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspectApk } from '../../../src/files/inspect/apk.ts';
import type { FakeDevice } from './device.ts';
import { recording } from './device.ts';
import { SCENARIOS } from './scenarios.ts';
import { pkill, screenrecord } from './screenrecord.ts';
import { dumpScreen, dumpsysAccount, keyEvent, startActivity, tap, typeText } from './ui.ts';

export interface ShellIo {
  write(data: string | Buffer): void;
  end(): void;
  /** The client closed the connection (the real shell would get SIGPIPE on its next write). */
  readonly closed: boolean;
  onClose(listener: () => void): void;
}

export function runShell(device: FakeDevice, command: string, io: ShellIo): void {
  device.commands.push(command);
  void (async () => {
    let status = 0;
    for (const { words, op } of parse(command)) {
      if (op === '&&' && status !== 0) continue;
      if (words.length === 0) continue;
      status = await run(device, words, io);
      if (io.closed) return;
    }
    io.end();
  })();
}

/** Words and the operator before them; redirections to /dev/null and `2>&1` are dropped. */
function parse(command: string): Array<{ words: string[]; op: ';' | '&&' }> {
  const commands: Array<{ words: string[]; op: ';' | '&&' }> = [{ words: [], op: ';' }];
  let word: string | null = null;
  const flush = () => {
    if (word !== null) commands.at(-1)!.words.push(word);
    word = null;
  };
  for (let at = 0; at < command.length; at++) {
    const char = command[at]!;
    if (char === "'") {
      const close = command.indexOf("'", at + 1);
      word = (word ?? '') + command.slice(at + 1, close);
      at = close;
    } else if (char === '"') {
      let text = '';
      for (at++; at < command.length && command[at] !== '"'; at++)
        text += command[at] === '\\' ? command[++at] : command[at];
      word = (word ?? '') + text;
    } else if (char === ' ' || char === '\t') flush();
    else if (char === ';' || (char === '&' && command[at + 1] === '&')) {
      flush();
      commands.push({ words: [], op: char === ';' ? ';' : '&&' });
      if (char === '&') at++;
    } else word = (word ?? '') + char;
  }
  flush();
  for (const entry of commands) entry.words = entry.words.filter((each) => !/^\d?>(\/dev\/null|&\d)$/.test(each));
  return commands;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(device: FakeDevice, words: string[], io: ShellIo): Promise<number> {
  const [name, ...args] = words;
  const say = (text: string) => io.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  switch (name) {
    // What the adb command line wraps `adb logcat` in: `export ANDROID_LOG_TAGS=…; exec logcat …`.
    case 'export':
      return 0;
    case 'exec':
      return args.length === 0 ? 0 : run(device, args, io);
    case 'echo':
      io.write(`${args.join(' ')}\n`);
      return 0;
    case 'getprop':
      if (args[0] !== undefined) say(device.props.get(args[0]) ?? '');
      else say([...device.props].map(([key, value]) => `[${key}]: [${value}]`).join('\n'));
      return 0;
    case 'setprop':
      if (args[0]?.startsWith('persist.sys.') && !device.rooted) {
        say(`Failed to set property '${args[0]}' to '${args[1]}'.\nSee dmesg for error reason.`);
        return 1;
      }
      device.props.set(args[0]!, args[1] ?? '');
      return 0;
    case 'pm':
      return pm(device, args, say);
    case 'am':
      return am(device, args, io, say);
    case 'cmd':
      return cmd(device, args, say);
    case 'svc':
      if (args[0] === 'wifi' && (args[1] === 'enable' || args[1] === 'disable')) {
        device.settings.set('global/wifi_on', args[1] === 'enable' ? '1' : '0');
        return 0;
      }
      say('usage: svc wifi [enable|disable]');
      return 1;
    case 'settings': {
      const [verb, namespace, key, value] = args;
      if (verb === 'get') say(device.settings.get(`${namespace}/${key}`) ?? 'null');
      else if (verb === 'put') device.settings.set(`${namespace}/${key}`, value ?? '');
      else if (verb === 'delete') device.settings.delete(`${namespace}/${key}`);
      return 0;
    }
    case 'dumpsys':
      return dumpsys(device, args, say);
    case 'top':
      return top(device, args, say);
    case 'pidof': {
      const pid = device.running.get(args[0] ?? '');
      if (pid === undefined) return 1;
      say(String(pid));
      return 0;
    }
    case 'screencap':
      io.write(device.screenshot());
      return 0;
    case 'screenrecord':
      return screenrecord(device, args, io);
    case 'pkill':
      return pkill(device, args);
    case 'logcat':
      return logcat(device, args, io, say);
    case 'monkey':
      return monkey(device, args, io, say);
    case 'find': {
      const roots = args.filter((arg) => arg.startsWith('/'));
      say(
        roots
          .flatMap((root) =>
            device
              .below(root)
              .map((file) => `${root.replace(/\/+$/, '')}/${file.slice(root.replace(/\/+$/, '').length + 1)}`),
          )
          .join('\n'),
      );
      return 0;
    }
    case 'cat': {
      for (const file of args) {
        if (file === '/proc/sys/kernel/random/boot_id')
          say(`5f1c2a4e-0000-4000-8000-${String(device.boots).padStart(12, '0')}`);
        else {
          const content = device.files.get(file);
          if (content === undefined || content === null) {
            say(`cat: ${file}: ${content === null ? 'Is a directory' : 'No such file or directory'}`);
            return 1;
          }
          io.write(content);
        }
      }
      return 0;
    }
    case 'uiautomator': {
      if (args[0] !== 'dump') {
        say(
          'Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\nhelp: displays help message\n\nruntest: executes UI automation tests\n\ndump: creates an XML dump of current UI hierarchy\n\nevents: prints out accessibility events until terminated',
        );
        return 1;
      }
      const file = args.slice(1).find((arg) => !arg.startsWith('-')) ?? '/sdcard/window_dump.xml';
      device.writeFile(file, Buffer.from(dumpScreen(device)));
      say(`UI hierchary dumped to: ${file}`);
      return 0;
    }
    case 'input':
      return input(device, args, say);
    case 'wm':
      if (args[0] === 'dismiss-keyguard') return 0;
      if (args[0] === 'size' && args.length === 1) {
        say('Physical size: 1080x2400');
        return 0;
      }
      say(`Error: unknown command '${args[0]}'`);
      return 1;
    case 'rm':
      for (const file of args.filter((arg) => !arg.startsWith('-'))) device.remove(file.replace(/\/+$/, ''));
      return 0;
    case 'mkdir':
      for (const dir of args.filter((arg) => !arg.startsWith('-'))) device.files.set(dir, null);
      return 0;
    default:
      say(`/system/bin/sh: ${name}: inaccessible or not found`);
      return 127;
  }
}

async function pm(device: FakeDevice, args: string[], say: (text: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'list' && rest[0] === 'packages') {
    say([...device.packages.keys()].map((name) => `package:${name}`).join('\n'));
    return 0;
  }
  if (verb === 'list' && rest[0] === 'instrumentation') {
    say(
      [...device.packages]
        .filter(([, pkg]) => pkg.instrumentation !== null)
        .map(
          ([name, pkg]) =>
            `instrumentation:${name}/${pkg.instrumentation!.runner} (target=${pkg.instrumentation!.target})`,
        )
        .join('\n'),
    );
    return 0;
  }
  if (verb === 'install') {
    const options = rest.filter((arg) => arg.startsWith('-'));
    if (options.includes('-g') && device.apiLevel < 23) {
      say('Error: Unknown option: -g');
      return 1;
    }
    const file = rest.find((arg) => !arg.startsWith('-'));
    const content = file === undefined ? undefined : device.files.get(file);
    if (!content) {
      say(`Failure [INSTALL_FAILED_INVALID_URI: Invalid URI ${file}]`);
      return 1;
    }
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-adb-apk-'));
    try {
      fs.writeFileSync(path.join(temp, 'base.apk'), content);
      const { properties } = await inspectApk(path.join(temp, 'base.apk'), 'base.apk');
      const name = properties.package_name!;
      const instrumentation =
        properties.instrumentation_name === undefined
          ? null
          : { runner: properties.instrumentation_name, target: properties.target_package_name ?? '' };
      if (device.packages.get(name)?.system && !options.includes('-r')) {
        say('Failure [INSTALL_FAILED_ALREADY_EXISTS: Attempt to re-install without first uninstalling.]');
        return 1;
      }
      const split = (list: string | undefined) => (list ?? '').split(',').filter((entry) => entry !== '');
      device.packages.set(name, {
        system: false,
        activities: split(properties.activities),
        exported: split(properties.exported_activities),
        instrumentation,
      });
      device.files.set(`/sdcard/Android/data/${name}`, null);
      say('Success');
      return 0;
    } catch (error) {
      say(`Failure [INSTALL_PARSE_FAILED_NOT_APK: ${(error as Error).message}]`);
      return 1;
    } finally {
      fs.rmSync(temp, { recursive: true, force: true });
    }
  }
  if (verb === 'uninstall') {
    const name = rest.find((arg) => !arg.startsWith('-')) ?? '';
    const installed = device.packages.get(name);
    if (installed === undefined || installed.system) {
      say('Failure [DELETE_FAILED_INTERNAL_ERROR]');
      return 1;
    }
    device.stop(name);
    device.packages.delete(name);
    device.appLocales.delete(name);
    device.remove(`/sdcard/Android/data/${name}`);
    say('Success');
    return 0;
  }
  if (verb === 'clear') {
    const name = rest[0] ?? '';
    if (!device.packages.has(name)) {
      say('Failed');
      return 1;
    }
    device.stop(name);
    device.remove(`/sdcard/Android/data/${name}`);
    device.files.set(`/sdcard/Android/data/${name}`, null);
    say('Success');
    return 0;
  }
  if (verb === 'path') {
    if (!device.packages.has(rest[0] ?? '')) return 1;
    say(`package:/data/app/~~x==/${rest[0]}-1/base.apk`);
    return 0;
  }
  say(`Unknown command: ${verb}`);
  return 1;
}

async function am(device: FakeDevice, args: string[], io: ShellIo, say: (text: string) => void): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'force-stop') {
    device.stop(rest.at(-1) ?? '');
    return 0;
  }
  if (verb === 'start' && rest.includes('-a')) {
    const { output, status } = startActivity(device, rest[rest.indexOf('-a') + 1] ?? '');
    say(output);
    return status;
  }
  if (verb === 'start') {
    const component = rest[rest.indexOf('-n') + 1] ?? '';
    const [pkg = '', short = ''] = component.split('/');
    const activity = short.startsWith('.') ? pkg + short : short;
    say(`Starting: Intent { cmp=${component} }`);
    const installed = device.packages.get(pkg);
    if (installed === undefined || !installed.activities.includes(activity)) {
      say(`Error type 3\nError: Activity class {${pkg}/${activity}} does not exist.`);
      return 1;
    }
    if (!installed.exported.includes(activity)) {
      say(
        `Exception occurred while executing 'start':\njava.lang.SecurityException: Permission Denial: starting Intent { cmp=${pkg}/${activity} } from null (pid=-1, uid=2000) not exported from uid 10231`,
      );
      return 255;
    }
    device.start(pkg);
    device.foreground = `${pkg}/${activity}`;
    if (device.crashingActivities.has(activity)) {
      setTimeout(() => device.crash(pkg), 50);
    }
    say(`Status: ok\nLaunchState: COLD\nActivity: ${pkg}/${activity}\nTotalTime: 412\nWaitTime: 418\nComplete`);
    return 0;
  }
  if (verb === 'instrument') return instrument(device, rest, io, say);
  say(`Error: unknown command '${verb}'`);
  return 1;
}

async function instrument(
  device: FakeDevice,
  args: string[],
  io: ShellIo,
  say: (text: string) => void,
): Promise<number> {
  const component = args.at(-1) ?? '';
  const [testPackage = '', runner = ''] = component.split('/');
  const installed = device.packages.get(testPackage);
  const scenario = device.instrumentations.get(testPackage) ?? SCENARIOS[testPackage];
  if (installed?.instrumentation == null || installed.instrumentation.runner !== runner || scenario === undefined) {
    say(
      `INSTRUMENTATION_STATUS: id=ActivityManagerService\nINSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: ComponentInfo{${component}}\nINSTRUMENTATION_STATUS_CODE: -1\nandroid.util.AndroidException: INSTRUMENTATION_FAILED: ${component}\n\tat com.android.commands.am.Instrument.run(Instrument.java:519)`,
    );
    return 1;
  }
  const target = installed.instrumentation.target;
  if (!device.packages.has(target)) {
    say(
      `INSTRUMENTATION_RESULT: shortMsg=java.lang.RuntimeException\nINSTRUMENTATION_RESULT: longMsg=java.lang.RuntimeException: Unable to instantiate instrumentation ComponentInfo{${component}}: target package ${target} is not installed\nINSTRUMENTATION_CODE: 0`,
    );
    return 0;
  }
  device.start(target);
  device.foreground = `${target}/.MainActivity`;
  scenario.effects?.(device);
  const lines = scenario.output(device).split('\n');
  let stopped = false;
  const forget = device.onStop(target, () => (stopped = true));
  const pause = (scenario.durationMs ?? 1500) / Math.max(1, lines.length);
  for (const line of lines) {
    if (stopped || io.closed) break;
    if (line.includes('shortMsg=Process crashed')) {
      forget();
      device.crash(target);
    }
    say(line);
    await sleep(pause);
  }
  if (scenario.endless) while (!stopped && !io.closed) await sleep(50);
  forget();
  // The instrumentation dies with its process: `am` says so, if anyone still listens.
  if (stopped && scenario.endless) say('INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0');
  if (!stopped && !scenario.endless) device.stop(target);
  return 0;
}

/** `input tap|text|keyevent`: silent when it works, as the real one is. */
function input(device: FakeDevice, args: string[], say: (text: string) => void): number {
  const [verb, ...rest] = args;
  if (verb === 'tap' && rest.length === 2 && rest.every((arg) => /^\d+$/.test(arg)))
    tap(device, Number(rest[0]), Number(rest[1]));
  else if (verb === 'text' && rest.length === 1) typeText(device, rest[0]!);
  else if (verb === 'keyevent' && rest.length > 0) rest.forEach((key) => keyEvent(device, key));
  else if (verb === 'swipe') return 0;
  else {
    say(`Error: Invalid arguments for command: ${verb}`);
    return 1;
  }
  return 0;
}

function cmd(device: FakeDevice, args: string[], say: (text: string) => void): number {
  if (args[0] !== 'locale' || device.apiLevel < 33) {
    say(`Can't find service: ${args[0]}`);
    return 20;
  }
  const pkg = args[2] ?? '';
  const locales = args[args.indexOf('--locales') + 1];
  if (args[1] === 'set-app-locales') {
    if (!device.packages.has(pkg)) {
      say(`Unknown package name ${pkg}`);
      return 255;
    }
    if (locales === undefined || locales === '') device.appLocales.delete(pkg);
    else device.appLocales.set(pkg, locales);
    return 0;
  }
  if (args[1] === 'get-app-locales') {
    say(`Locales for ${pkg} for user 0 are [${device.appLocales.get(pkg) ?? ''}]`);
    return 0;
  }
  return 255;
}

function dumpsys(device: FakeDevice, args: string[], say: (text: string) => void): number {
  if (args[0] === 'account') {
    say(dumpsysAccount(device));
    return 0;
  }
  if (args[0] === 'battery') {
    say(recording('dumpsys-battery.txt', device.battery));
    return 0;
  }
  if (args[0] === 'meminfo') {
    const pkg = args[1] ?? '';
    const pid = device.running.get(pkg);
    if (pid === undefined) say(`No process found for: ${pkg}`);
    else
      say(
        recording(device.apiLevel >= 30 ? 'dumpsys-meminfo-api34.txt' : 'dumpsys-meminfo-api24.txt', {
          pid,
          package: pkg,
          pss: 40_000 + (pid % 97) * 113,
        }),
      );
    return 0;
  }
  say(`Can't find service: ${args[0]}`);
  return 0;
}

function top(device: FakeDevice, args: string[], say: (text: string) => void): number {
  const toybox = device.apiLevel >= 26;
  if (!toybox && args.some((arg) => ['-b', '-p', '-o', '-q'].includes(arg))) {
    say(
      `Invalid argument "${args.find((arg) => ['-b', '-p', '-o', '-q'].includes(arg))}".\nUsage: top [ -m max_procs ] [ -n iterations ] [ -d delay ] [ -s sort_column ] [ -t ] [ -h ]`,
    );
    return 1;
  }
  const wanted = toybox ? Number(args[args.indexOf('-p') + 1]) : undefined;
  const [pkg, pid] = [...device.running].find(([, each]) => wanted === undefined || each === wanted) ?? ['', NaN];
  if (Number.isNaN(pid)) {
    say(
      toybox
        ? recording('top-toybox.txt').split('\n').slice(0, 5).join('\n')
        : recording('top-toolbox.txt').split('\n').slice(0, 6).join('\n'),
    );
    return 0;
  }
  // A busy app: a quarter of one core on the toybox phone, a few percent of the device on the old one.
  say(recording(toybox ? 'top-toybox.txt' : 'top-toolbox.txt', { pid, package: pkg, cpu: toybox ? '25.0' : '6' }));
  return 0;
}

async function logcat(device: FakeDevice, args: string[], io: ShellIo, say: (text: string) => void): Promise<number> {
  if (args.includes('-c')) {
    device.log = [];
    return 0;
  }
  for (const line of device.log) say(line);
  if (args.includes('-d')) return 0;
  const follow = (line: string) => say(line);
  device.followers.add(follow);
  // logcat follows until the connection closes, or the phone goes away (a reboot).
  await new Promise<void>((resolve) => {
    io.onClose(resolve);
    const forget = device.onStop('logd', resolve);
    io.onClose(forget);
  });
  device.followers.delete(follow);
  return 0;
}

async function monkey(device: FakeDevice, args: string[], io: ShellIo, say: (text: string) => void): Promise<number> {
  const pkg = args[args.indexOf('-p') + 1] ?? '';
  const seed = args[args.indexOf('-s') + 1] ?? '0';
  const throttle = Number(args[args.indexOf('--throttle') + 1] ?? 0);
  const count = Number(args.at(-1));
  if (!device.packages.has(pkg)) {
    say('** No activities found to run, monkey aborted.');
    return 252;
  }
  const pid = device.start(pkg);
  device.foreground = `${pkg}/.MainActivity`;
  let stopped = false;
  const forget = device.onStop(pkg, () => (stopped = true));
  const crash = device.monkeyCrashes;
  const lines = recording(crash ? 'monkey-crash.txt' : 'monkey-ok.txt', { package: pkg, seed, count, pid }).split('\n');
  const pause = Math.min(2000, (throttle * count) / 4) / lines.length;
  for (const line of lines) {
    if (io.closed || (stopped && !crash)) break;
    if (crash && line.startsWith('// CRASH:')) device.crash(pkg);
    say(line);
    await sleep(pause);
  }
  forget();
  return crash ? 1 : 0;
}
