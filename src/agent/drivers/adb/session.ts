/**
 * What every kind of run does on a phone around its tests: apply the run's device settings,
 * install the app (and test APK), follow the log, sample the app, take the last screenshot, and
 * tell a lost phone (infrastructure) from failing tests.
 */
import path from 'node:path';
import type { Artifact, DeviceDescription, ExecutionContext, ExecutionResult, Job, LocalFile } from '../../driver.ts';
import { rebootAndWait } from './boot.ts';
import { type DeviceIo, InstallRefused } from './device-io.ts';
import { LogcatCapture, samplePerformance, screenshot } from './monitors.ts';
import { SettingsRefused, applyAppLocale, applyDeviceSettings } from './settings.ts';
import type { DeviceTracker } from './tracker.ts';
import type { UiFlowOptions } from './ui-flow.ts';

export interface AdbDevice {
  readonly description: DeviceDescription;
  readonly io: DeviceIo;
  readonly tracker: DeviceTracker;
  readonly bootTimeoutMs: number;
  /** Pacing of the flows driven through the screen (the Google account), and the agent's log for them. */
  readonly ui: Omit<UiFlowOptions, 'signal'>;
}

export function infra(failReason: string, artifacts: readonly Artifact[] = []): ExecutionResult {
  return { outcome: 'INFRA_ERROR', failReason, testCases: null, exitCode: null, artifacts };
}

export class RunSession {
  readonly screenshots: string;
  private logcat: LogcatCapture | null = null;
  private stopSampling: (() => Promise<void>) | null = null;
  private shots = 0;

  constructor(
    readonly job: Job,
    readonly context: ExecutionContext,
    readonly device: AdbDevice,
  ) {
    this.screenshots = path.join(job.workDir, 'screenshots');
  }

  get io(): DeviceIo {
    return this.device.io;
  }

  get apiLevel(): number | null {
    return this.device.description.apiLevel;
  }

  /**
   * The phone is no longer there to talk to (unplugged, rebooted by someone, adb lost it). Asked
   * of the phone itself: a connection can drop before the ADB server's device list says why.
   */
  async lost(): Promise<boolean> {
    if (this.device.tracker.state(this.device.io.serial) !== 'device') return true;
    try {
      return (await this.io.shell(['echo', 'alive'], { timeoutMs: 5000 })).trim() !== 'alive';
    } catch {
      return true;
    }
  }

  /**
   * Settings, then the APKs, then the per-app locale. Answers the result to end with when one of
   * them cannot be done: an infrastructure error, or an app that the phone refuses (FAILED).
   */
  async install(apks: readonly LocalFile[], localePackages: readonly string[]): Promise<ExecutionResult | null> {
    const { job, context } = this;
    try {
      if (job.deviceSettings !== null) {
        const { reboot } = await applyDeviceSettings(
          this.io,
          job.deviceSettings,
          this.apiLevel,
          context.signal,
          this.device.ui,
        );
        if (reboot) await rebootAndWait(this.io, this.device.tracker, this.device.bootTimeoutMs, context.signal);
      }
      context.step('INSTALL');
      for (const apk of apks) {
        try {
          await this.io.install(apk.path, this.apiLevel, context.signal);
        } catch (error) {
          if (error instanceof InstallRefused)
            return {
              outcome: 'COMPLETED',
              failReason: `${apk.name} could not be installed: ${error.message}`,
              testCases: [],
              exitCode: null,
              artifacts: [],
            };
          throw error;
        }
      }
      await applyAppLocale(this.io, job.deviceSettings, this.apiLevel, localePackages, context.signal);
      return null;
    } catch (error) {
      return await this.failure(error, 'preparing the phone');
    }
  }

  /** The result for an error thrown while talking to the phone. */
  async failure(error: unknown, doing: string): Promise<ExecutionResult> {
    if (this.context.signal.aborted)
      return { outcome: 'STOPPED', failReason: null, testCases: null, exitCode: null, artifacts: [] };
    if (error instanceof SettingsRefused)
      return {
        outcome: 'REFUSED',
        failReason: `the device settings could not be applied: ${error.message}`,
        testCases: null,
        exitCode: null,
        artifacts: [],
      };
    if (await this.lost())
      return infra(
        `the phone went away while ${doing} (${this.device.tracker.state(this.io.serial) ?? 'disconnected'})`,
      );
    return infra(`${doing} failed: ${(error as Error).message}`);
  }

  /** Starts the log and, when there is an app to watch, CPU/memory samples of it. */
  async monitor(appPackage: string | null): Promise<void> {
    this.logcat = await LogcatCapture.start(this.io, path.join(this.job.workDir, 'logcat.txt'), this.context.signal);
    if (appPackage !== null)
      this.stopSampling = samplePerformance(
        this.io,
        appPackage,
        this.apiLevel,
        (sample) => this.context.sample(sample),
        this.context.signal,
      );
  }

  get crashes() {
    return this.logcat?.detector ?? null;
  }

  async screenshot(label: string): Promise<Artifact | null> {
    if (this.device.tracker.state(this.io.serial) !== 'device') return null;
    this.shots += 1;
    return screenshot(this.io, this.screenshots, `${String(this.shots).padStart(2, '0')}-${label}`);
  }

  /** Stops the monitors; a last screenshot unless stopped; answers the artifacts they made. */
  async finish(finalShot: boolean): Promise<Artifact[]> {
    const artifacts: Artifact[] = [];
    if (finalShot && !this.context.signal.aborted) {
      const last = await this.screenshot('final');
      if (last !== null) artifacts.push(last);
    }
    await this.stopSampling?.();
    if (this.logcat !== null) artifacts.push(await this.logcat.stop());
    return artifacts;
  }

  /** Stops what runs in the app's and the tests' processes; best effort (the phone may be gone). */
  async forceStop(packages: readonly string[]): Promise<void> {
    for (const packageName of packages)
      await this.io.shell(['am', 'force-stop', packageName], { timeoutMs: 10_000 }).catch(() => undefined);
  }
}
