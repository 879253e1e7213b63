/**
 * The iOS driver: real iPhones through go-ios (go-ios.ts). A device run installs the user's app
 * (and XCUITest runner) re-signed with the service's profile (install.ts, signer.ts), then runs
 * XCTest/XCUITest bundles (xctest.ts) or the crawler (crawler.ts, through WebDriverAgent: wda.ts)
 * while the device log, CPU samples and crash reports are recorded (capture.ts); an interactive
 * session hands the phone to a user through WebDriverAgent (interactive.ts). Cleaning
 * (cleaning.ts) returns the device to the baseline recorded when the agent first saw it.
 * Everything here was exercised against the fake go-ios of the tests, not on hardware:
 * docs/drivers.md#the-ios-driver says what that leaves unproven.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionKind } from '../../../domain/frameworks-kinds.ts';
import type { Artifact, DeviceDescription, Driver, ExecutionResult } from '../../driver.ts';
import { startRecording, watchCrashes } from './capture.ts';
import { serveInteractiveIos } from './interactive.ts';
import { cleanDevice, ensureBaseline } from './cleaning.ts';
import { type CrawlLimits, DEFAULT_CRAWL_LIMITS, crawl } from './crawler.ts';
import { DeviceRecords } from './device-records.ts';
import { GoIos } from './go-ios.ts';
import type { ListedDevice } from './go-ios-output.ts';
import { Refusal, signAndInstall, unpackBuild } from './install.ts';
import { modelName } from './models.ts';
import { allowsDevice } from './profile.ts';
import { applyLocale, unsupportedSetting } from './settings.ts';
import { chooseSigner, findGoIos, loadSigning } from './setup.ts';
import type { Signer, SigningSetup } from './signer.ts';
import { type UiAutomation, wdaAutomation } from './wda.ts';
import { planTests, runTests } from './xctest.ts';
import { findTool, missingToolMessage, noRecording } from '../host/ffmpeg.ts';
import { recordScreen } from './screen-recording.ts';

/** What a real iPhone runs here; Appium client side and server-side packages are not offered on iOS yet. */
export const IOS_KINDS: readonly ExecutionKind[] = ['xctest', 'xcuitest', 'crawler', 'interactive'];

export interface IosDriverOptions {
  /** Baselines and developer disk images live here. */
  readonly dataDir: string;
  readonly goIos: GoIos;
  readonly signing: SigningSetup;
  readonly signer: Signer;
  /** How the crawler drives the UI; WebDriverAgent through go-ios by default. */
  readonly automation?: UiAutomation;
  readonly crawlLimits?: CrawlLimits;
  /** How long a rebooted device may take to answer again (default 3 min), and how often to look. */
  readonly bootTimeoutMs?: number;
  readonly pollMs?: number;
  /** How long WebDriverAgent may take to answer once go-ios started it (default 90 s). */
  readonly wdaReadyTimeoutMs?: number;
  /** ffmpeg, which encodes the phone's screen stream into a session's video (default `ffmpeg` on PATH). */
  readonly ffmpeg?: string;
}

/** The settings of a device host (config: --ios-bin, --ios-signing, --ios-signer), checked now. */
export interface IosSettings {
  readonly dataDir: string;
  readonly binary?: string;
  readonly signingDir?: string;
  readonly signer?: string;
  /** Extra environment for go-ios (USBMUXD_SOCKET_ADDRESS for a remote usbmuxd, say). */
  readonly env?: Readonly<Record<string, string>>;
}

export function iosDriverFromSettings(settings: IosSettings): Driver {
  const goIos = new GoIos(findGoIos(settings.binary), settings.env);
  const signing = loadSigning(settings.signingDir);
  return createIosDriver({
    dataDir: settings.dataDir,
    goIos,
    signing,
    signer: chooseSigner(settings.signer, goIos, signing, settings.env),
  });
}

const LIST_CACHE_MS = 2000;

export function createIosDriver(options: IosDriverOptions): Driver {
  const { goIos, signing, signer } = options;
  const records = new DeviceRecords(options.dataDir);
  const automation = options.automation ?? wdaAutomation(goIos, { readyTimeoutMs: options.wdaReadyTimeoutMs });
  const cleaning = {
    goIos,
    records,
    imageDir: path.join(options.dataDir, 'developer-disk-images'),
    bootTimeoutMs: options.bootTimeoutMs ?? 180_000,
    pollMs: options.pollMs ?? 1000,
  };
  /**
   * go-ios fails the whole detailed list when one phone does not answer lockdown (not trusted yet,
   * say): then the phones usbmuxd knows are asked one by one, and those that answer are listed.
   */
  const listAnswering = async (): Promise<ListedDevice[]> => {
    try {
      return await goIos.list();
    } catch (error) {
      let udids: string[];
      try {
        udids = await goIos.udids();
      } catch {
        throw error;
      }
      const answering: ListedDevice[] = [];
      for (const udid of udids)
        answering.push(
          ...(await goIos.info(udid).then(
            (device) => [device],
            () => [],
          )),
        );
      return answering;
    }
  };
  let listed: { at: number; devices: Promise<ListedDevice[]> } | null = null;
  // A busy host's go-ios can fail one listing; the name a device was last listed under still holds.
  const modelNames = new Map<string, string>();
  const list = (): Promise<ListedDevice[]> => {
    if (listed === null || Date.now() - listed.at > LIST_CACHE_MS) {
      const devices = listAnswering().catch((error: Error) => {
        listed = null;
        throw new Error(
          `go-ios cannot list the iOS devices: ${error.message}${/usbmuxd/.test(error.message) ? ' (is usbmuxd running? see docs/device-hosts.md#ios)' : ''}`,
        );
      });
      listed = { at: Date.now(), devices };
    }
    return listed.devices;
  };

  return {
    name: 'ios',
    async listDevices(): Promise<DeviceDescription[]> {
      const devices = await list();
      for (const device of devices) {
        // First sight: what is on the device now is what cleaning keeps. A device that does not
        // answer yet (not trusted, booting) gets its baseline at its first cleaning.
        await ensureBaseline({ goIos, records }, device.udid).catch(() => undefined);
      }
      for (const device of devices) modelNames.set(device.udid, modelName(device.productType));
      return devices.map((device) => ({
        serial: device.udid,
        displayName: modelName(device.productType),
        manufacturer: 'Apple',
        osType: 'IOS',
        platform: 'IOS',
        releaseVersion: device.productVersion,
        apiLevel: null,
        executionKinds: IOS_KINDS,
        formFactor: device.productType.startsWith('iPad') ? 'TABLET' : 'PHONE',
      }));
    },

    async health(serial) {
      let devices: ListedDevice[];
      try {
        devices = await list();
      } catch (error) {
        return { ok: false, reason: (error as Error).message };
      }
      if (!devices.some((device) => device.udid === serial))
        return { ok: false, reason: 'go-ios does not see the device: unplugged, not trusted, or usbmuxd stopped' };
      if (!allowsDevice(signing.profile, serial)) {
        return {
          ok: false,
          reason: `the service's provisioning profile "${signing.profile.name}" does not include this device (${serial}): add it in the Apple developer portal and install the renewed profile`,
        };
      }
      return { ok: true };
    },

    async execute(job, context) {
      context.step('PREPARING');
      const infra = (failReason: string): ExecutionResult => ({
        outcome: 'INFRA_ERROR',
        failReason,
        testCases: null,
        exitCode: null,
        artifacts: [],
      });
      const failed = (error: unknown): ExecutionResult => {
        if (context.signal.aborted)
          return { outcome: 'STOPPED', failReason: null, testCases: [], exitCode: null, artifacts: [] };
        // A build that may not run here fails the run with the reason; retrying cannot help it.
        if (error instanceof Refusal)
          return { outcome: 'COMPLETED', failReason: error.message, testCases: [], exitCode: null, artifacts: [] };
        return infra((error as Error).message);
      };
      if (!IOS_KINDS.includes(job.kind))
        return infra(
          `iOS devices here run XCTest, XCUITest, the crawler and interactive sessions, not ${job.kind} tests`,
        );
      if (job.kind === 'interactive') {
        const listed = (await list().catch(() => [])).find((device) => device.udid === job.serial);
        const displayName = listed === undefined ? modelNames.get(job.serial) : modelName(listed.productType);
        return serveInteractiveIos(job, context, {
          goIos,
          signer,
          signing,
          udid: job.serial,
          displayName: displayName ?? job.serial,
          wdaReadyTimeoutMs: options.wdaReadyTimeoutMs,
        }).catch(failed);
      }
      if (job.app === null) return infra('the run has no app to install');
      if (job.kind !== 'crawler' && job.tests === null)
        return infra(`the run has no ${job.kind === 'xctest' ? 'XCTest bundle' : 'XCUITest runner'}`);
      const refused = job.deviceSettings === null ? null : unsupportedSetting(job.deviceSettings);
      if (refused !== null) return infra(refused);
      const udid = job.serial;
      try {
        if (job.deviceSettings?.locale) await applyLocale(goIos, udid, job.deviceSettings.locale);
        context.step('INSTALL');
        const app = await unpackBuild(job.app, path.join(job.workDir, 'app'), context);
        const { plan, runner } =
          job.kind === 'crawler' ? { plan: null, runner: null } : await planTests(job, job.tests!, app, context);
        const installing = { goIos, signer, signing };
        await signAndInstall(installing, udid, app, path.join(job.workDir, 'signed', 'app'), context.signal);
        if (runner !== null)
          await signAndInstall(installing, udid, runner, path.join(job.workDir, 'signed', 'runner'), context.signal);

        context.step('RUNNING');
        const crashes = await watchCrashes(goIos, udid, app.executable, job.workDir);
        const recording = startRecording(goIos, udid, job.workDir, context);
        let result: ExecutionResult;
        try {
          result =
            plan === null
              ? await crawl(
                  job,
                  context.signal,
                  automation,
                  { udid, bundleId: app.bundleId, crashes },
                  options.crawlLimits ?? DEFAULT_CRAWL_LIMITS,
                )
              : await runTests(goIos, udid, job, context.signal, plan, crashes);
        } catch (error) {
          await recording.stop();
          throw error;
        }
        const deviceLog = await recording.stop();
        const finalShot =
          plan !== null && result.outcome === 'COMPLETED' ? await finalScreenshot(goIos, udid, job.workDir) : [];
        return { ...result, artifacts: [...result.artifacts, ...deviceLog, ...finalShot] };
      } catch (error) {
        return failed(error);
      }
    },

    async clean(serial, kind) {
      listed = null;
      return cleanDevice(cleaning, serial, kind);
    },

    async record(serial, dir) {
      const ffmpeg = findTool(options.ffmpeg ?? 'ffmpeg');
      if (ffmpeg === null) return noRecording(missingToolMessage(options.ffmpeg ?? 'ffmpeg', 'no video was recorded'));
      return recordScreen(goIos, serial, { ffmpeg, dir });
    },
    missingTools() {
      const ffmpeg = options.ffmpeg ?? 'ffmpeg';
      return findTool(ffmpeg) === null
        ? [missingToolMessage(ffmpeg, 'device sessions on this host will have no video')]
        : [];
    },
    async close() {},
  };
}

/** The screen the tests left, for the run's gallery; a device that cannot take one does not fail the run. */
async function finalScreenshot(goIos: GoIos, udid: string, workDir: string): Promise<Artifact[]> {
  const file = path.join(workDir, 'screenshots', 'final.png');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    await goIos.screenshot(udid, file);
    return fs.existsSync(file) ? [{ kind: 'screenshot', path: file, name: 'final.png' }] : [];
  } catch {
    return [];
  }
}
