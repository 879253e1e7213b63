/**
 * The adb driver: real Android phones through an ADB server (`adb start-server` on the device
 * host, or any server named by ADB_SERVER_SOCKET / ANDROID_ADB_SERVER_PORT), spoken to with
 * adbkit. Phones are followed as they come and go (tracker.ts); each is described from its
 * properties, and its baseline is recorded when this host first sees it (baseline.ts). Runs:
 * instrumentation and UI Automator (instrumentation-run.ts), server-side packages
 * (server-side.ts), the crawler (crawler.ts). Cleaning: cleaning.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeviceDescription, Driver, Health } from '../../driver.ts';
import { Adb } from './adbkit.ts';
import { type Baseline, completeBaseline, loadBaseline, recordBaseline } from './baseline.ts';
import { bootState, waitForBoot } from './boot.ts';
import { cleanDevice } from './cleaning.ts';
import { type CrawlerOptions, DEFAULT_CRAWLER, crawl } from './crawler.ts';
import { DeviceIo } from './device-io.ts';
import { parseBattery } from './device-output.ts';
import { describeDevice } from './devices.ts';
import { runInstrumentation } from './instrumentation-run.ts';
import { serveThroughAppium, stopLeftoverAppium } from '../host/appium-server.ts';
import type { Sandbox } from '../host/sandbox.ts';
import { type AdbServerAddress, runServerSide } from './server-side.ts';
import { type AdbDevice, infra } from './session.ts';
import { DeviceTracker } from './tracker.ts';
import { DEFAULT_UI_TIMINGS, type UiTimings } from './ui-automator.ts';
import type { UiFlowOptions } from './ui-flow.ts';
import { findTool, missingToolMessage, noRecording } from '../host/ffmpeg.ts';
import { serveInteractiveAdb } from './interactive.ts';
import { recordScreen } from './screen-recording.ts';

export interface AdbDriverOptions {
  /** Baselines live here, one folder per phone. */
  readonly dataDir: string;
  readonly server?: AdbServerAddress;
  /** The adb executable adbkit runs (`adb start-server`) when no ADB server answers (default `adb` on PATH). */
  readonly adbBinary?: string;
  readonly log?: (message: string) => void;
  /** How long a reboot may take until boot completed (default 3 min). */
  readonly bootTimeoutMs?: number;
  /** Below this charge (percent) a phone reports itself unhealthy and takes no work (default 15). */
  readonly minBatteryLevel?: number;
  /** Above this battery temperature (°C) likewise (default 45). */
  readonly maxBatteryCelsius?: number;
  readonly crawler?: Partial<CrawlerOptions>;
  /** Pacing and deadlines of the flows driven through the screen (signing a Google account in and out). */
  readonly ui?: Partial<UiTimings>;
  /** The agent's environment: where server-side scripts find adb and the Android SDK. */
  readonly hostEnv?: NodeJS.ProcessEnv;
  /** Where server-side scripts (customer code) run (../host/sandbox.ts). */
  readonly sandbox: Sandbox;
  /** ffmpeg, which joins the recorded segments into a session's video (default `ffmpeg` on PATH). */
  readonly ffmpeg?: string;
  /** Seconds of each screenrecord segment (default and maximum 180, screenrecord's own limit). */
  readonly videoSegmentSeconds?: number;
  /**
   * The Appium command (docs/device-hosts.md#appium-for-client-side-sessions): when set, phones
   * also take Appium client side sessions, each through an Appium server of its own.
   */
  readonly appium?: string;
}

/** How long listDevices waits for the ADB server's first list of phones. */
const FIRST_LIST_MS = 5000;

/** The ADB server the adb command line would use: ADB_SERVER_SOCKET=tcp:host:port, else ANDROID_ADB_SERVER_ADDRESS/PORT, else 127.0.0.1:5037. */
export function adbServerFromEnv(env: NodeJS.ProcessEnv): AdbServerAddress {
  const socket = /^tcp:(.+):(\d+)$/.exec(env.ADB_SERVER_SOCKET ?? '');
  if (socket !== null) return { host: socket[1]!, port: Number(socket[2]) };
  const port = Number(env.ANDROID_ADB_SERVER_PORT ?? 5037);
  return {
    host: env.ANDROID_ADB_SERVER_ADDRESS || '127.0.0.1',
    port: Number.isSafeInteger(port) && port > 0 && port < 65536 ? port : 5037,
  };
}

export function createAdbDriver(options: AdbDriverOptions): Driver {
  const log = options.log ?? ((message: string) => process.stderr.write(`[adb] ${message}\n`));
  const server = options.server ?? adbServerFromEnv(options.hostEnv ?? {});
  const bootTimeoutMs = options.bootTimeoutMs ?? 180_000;
  const crawler: CrawlerOptions = { ...DEFAULT_CRAWLER, ...options.crawler };
  const uiTimings: UiTimings = { ...DEFAULT_UI_TIMINGS, ...options.ui };
  const uiOf = (serial: string): Omit<UiFlowOptions, 'signal'> => ({
    timings: uiTimings,
    log: (message) => log(`${serial}: ${message}`),
  });
  const client = Adb.createClient({ host: server.host, port: server.port, bin: options.adbBinary ?? 'adb' });
  // adbkit re-emits connection errors on the client; unheard, they would end the process.
  client.on('error', (error: Error) => log(`ADB connection error: ${error.message}`));
  const tracker = new DeviceTracker(client, log);
  tracker.on('change', (serial, state) => log(`${serial}: ${state ?? 'disconnected'}`));
  fs.mkdirSync(options.dataDir, { recursive: true });

  const ios = new Map<string, DeviceIo>();
  const descriptions = new Map<string, DeviceDescription>();
  /** The pid of the phone's Appium server while a client side session runs (serial: an adb serial, or host:port). */
  const appiumPidFile = (serial: string) => path.join(options.dataDir, `appium-${serial.replace(/[^\w.-]/g, '_')}.pid`);
  const ioOf = (serial: string) => {
    let io = ios.get(serial);
    if (io === undefined) ios.set(serial, (io = new DeviceIo(client, serial)));
    return io;
  };

  /** A phone's description; read once (its model and Android version are fixed by the service). */
  async function describe(serial: string): Promise<DeviceDescription> {
    const known = descriptions.get(serial);
    if (known !== undefined) return known;
    const description = describeDevice(serial, await ioOf(serial).properties());
    descriptions.set(serial, description);
    return description;
  }

  /** The baseline, recorded now if this host never saw the phone before. */
  async function baselineOf(serial: string): Promise<Baseline> {
    const known = loadBaseline(options.dataDir, serial);
    if (known !== null) {
      const complete = await completeBaseline(options.dataDir, ioOf(serial), known);
      if (complete !== known)
        log(`${serial}: baseline completed with the phone's ${complete.accounts!.length} account(s)`);
      return complete;
    }
    const baseline = await recordBaseline(options.dataDir, ioOf(serial));
    log(
      `${serial}: baseline recorded (${baseline.packages.length} packages, ${baseline.files.length} storage entries)`,
    );
    return baseline;
  }

  function stateProblem(serial: string): string | null {
    const state = tracker.state(serial);
    if (state === 'device') return null;
    if (state === null) return tracker.problem ?? 'the phone is not connected to this host';
    if (state === 'unauthorized')
      return 'USB debugging is not authorized: accept the prompt on the phone (tick "Always allow from this computer")';
    if (state === 'offline') return 'adb reports the phone offline: reconnect it, or restart the ADB server';
    if (state.startsWith('no permissions'))
      return "the ADB server may not open the phone's USB device: check the udev rules (docs/device-hosts.md)";
    return `adb reports the phone as ${state}`;
  }

  async function lookup(serial: string): Promise<AdbDevice> {
    const problem = stateProblem(serial);
    if (problem !== null) throw new Error(problem);
    return { description: await describe(serial), io: ioOf(serial), tracker, bootTimeoutMs, ui: uiOf(serial) };
  }

  return {
    name: 'adb',
    async listDevices() {
      await Promise.race([tracker.ready, sleep(FIRST_LIST_MS)]);
      if (tracker.problem !== null && tracker.serials().length === 0) {
        throw new Error(`${tracker.problem}: is it running on ${server.host}:${server.port}? (adb start-server)`);
      }
      const devices: DeviceDescription[] = [];
      for (const serial of tracker.serials()) {
        const problem = stateProblem(serial);
        if (problem !== null) {
          log(`${serial}: not offered (${problem})`);
          continue;
        }
        try {
          const described = await describe(serial);
          devices.push(
            options.appium === undefined
              ? described
              : { ...described, executionKinds: [...described.executionKinds, 'appium-client'] },
          );
          if (loadBaseline(options.dataDir, serial) === null && (await bootState(ioOf(serial))).completed)
            await baselineOf(serial);
        } catch (error) {
          log(`${serial}: not offered (${(error as Error).message})`);
        }
      }
      return devices;
    },

    async health(serial): Promise<Health> {
      const problem = stateProblem(serial);
      if (problem !== null) return { ok: false, reason: problem };
      try {
        const io = ioOf(serial);
        if (!(await bootState(io)).completed) return { ok: false, reason: 'the phone is still booting' };
        const battery = parseBattery(await io.shell(['dumpsys', 'battery'], { timeoutMs: 10_000 }));
        if (battery.level !== null && battery.level < (options.minBatteryLevel ?? 15))
          return { ok: false, reason: `the battery is at ${battery.level}% (is the hub port charging it?)` };
        if (battery.temperatureC !== null && battery.temperatureC > (options.maxBatteryCelsius ?? 45))
          return { ok: false, reason: `the battery is at ${battery.temperatureC} °C: let the phone cool down` };
        return { ok: true };
      } catch (error) {
        return { ok: false, reason: `the phone does not answer: ${(error as Error).message}` };
      }
    },

    async execute(job, context) {
      let device: AdbDevice;
      try {
        device = await lookup(job.serial);
      } catch (error) {
        return infra((error as Error).message);
      }
      context.step('PREPARING');
      switch (job.kind) {
        case 'instrumentation':
        case 'uiautomator':
          return runInstrumentation(job, context, device);
        case 'server-side':
        case 'calabash':
          return runServerSide(job, context, device, {
            server,
            hostEnv: options.hostEnv ?? {},
            tcpEndpoint: true,
            log,
            sandbox: options.sandbox,
          });
        case 'crawler':
          return crawl(job, context, device, crawler);
        case 'appium-client':
          if (options.appium === undefined) return infra('this host runs no Appium server (DEVICECLOUD_APPIUM)');
          return serveThroughAppium(job, context, {
            command: options.appium,
            capabilities: {
              platformName: 'Android',
              'appium:udid': job.serial,
              ...(job.app !== null && { 'appium:app': job.app.path }),
            },
            env: options.hostEnv,
            pidFile: appiumPidFile(job.serial),
          });
        case 'interactive':
          return serveInteractiveAdb(job, context, device);
        default:
          return infra(`Android phones on the adb driver do not run ${job.kind} tests`);
      }
    },

    async clean(serial, kind = 'FULL') {
      const problem = stateProblem(serial);
      if (problem !== null) return { ok: false, report: `cannot clean: ${problem}` };
      const io = ioOf(serial);
      try {
        const leftover = await stopLeftoverAppium(appiumPidFile(serial));
        await waitForBoot(io, tracker, bootTimeoutMs, null);
        const cleaned = await cleanDevice(io, tracker, await baselineOf(serial), bootTimeoutMs, kind, uiOf(serial));
        return leftover === null ? cleaned : { ...cleaned, report: `${leftover}; ${cleaned.report}` };
      } catch (error) {
        return { ok: false, report: (error as Error).message };
      }
    },

    async record(serial, dir) {
      const ffmpeg = findTool(options.ffmpeg ?? 'ffmpeg', options.hostEnv ?? process.env);
      if (ffmpeg === null) return noRecording(missingToolMessage(options.ffmpeg ?? 'ffmpeg', 'no video was recorded'));
      const problem = stateProblem(serial);
      if (problem !== null) return noRecording(problem);
      return recordScreen(ioOf(serial), { ffmpeg, dir, segmentSeconds: options.videoSegmentSeconds });
    },
    missingTools() {
      const ffmpeg = options.ffmpeg ?? 'ffmpeg';
      return findTool(ffmpeg, options.hostEnv ?? process.env) === null
        ? [missingToolMessage(ffmpeg, 'device sessions on this host will have no video')]
        : [];
    },
    async close() {
      tracker.close();
    },
  };
}
