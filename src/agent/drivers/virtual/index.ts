/**
 * The virtual driver: a simulated fleet for development, CI and the local cloud that runs
 * server-side test packages and the crawler for real (see server-side.ts, crawler.ts), and whose
 * devices have state on disk that cleaning really removes (device-state.ts). Frameworks that need
 * a real phone are not among its execution kinds, so such runs are EXCLUDED, never faked.
 */
import path from 'node:path';
import type { Driver } from '../../driver.ts';
import { encoderStandby } from '../host/encoder-standby.ts';
import {
  findTool,
  missingToolMessage,
  noRecording,
  recordFrames,
  rgbaInput,
  startFrameEncoder,
} from '../host/ffmpeg.ts';
import type { Sandbox } from '../host/sandbox.ts';
import { crawl } from './crawler.ts';
import { DeviceState } from './device-state.ts';
import { VIRTUAL_KINDS, type VirtualDeviceSpec, defaultVirtualDevices } from './devices.ts';
import { LiveScreen } from './screen/live.ts';
import { homeScreen } from './screen/ui-model.ts';
import { runServerSide } from './server-side.ts';
import { serveAppiumClient } from './appium-client.ts';
import { serveInteractiveSession } from './interactive.ts';

export { defaultVirtualDevices, type VirtualDeviceSpec };

/** Frames a second of a virtual device's video: its screens change a few times a second at most. */
export const VIRTUAL_VIDEO_FPS = 5;

/**
 * `sandbox` holds the customer code of server-side packages (../host/sandbox.ts); `ffmpeg` encodes
 * the videos (a command in PATH, or a path; default `ffmpeg`).
 */
export function createVirtualDriver(options: {
  dataDir: string;
  devices: readonly VirtualDeviceSpec[];
  sandbox: Sandbox;
  ffmpeg?: string;
}): Driver {
  const ffmpegCommand = options.ffmpeg ?? 'ffmpeg';
  const devices = new Map(options.devices.map((device) => [device.serial, device]));
  const states = new Map(
    options.devices.map((device) => [device.serial, new DeviceState(options.dataDir, device.serial, device.osType)]),
  );
  for (const state of states.values()) state.ensure();
  const home = (device: VirtualDeviceSpec, state: DeviceState) =>
    homeScreen(device.osType, device.displayName, state.installedApps());
  const screens = new Map(
    options.devices.map((device) => [
      device.serial,
      new LiveScreen(home(device, states.get(device.serial)!), device.serial),
    ]),
  );
  // A video keeps one frame size for its whole length: the upright one (a turned screen is drawn into it).
  const input = (screen: LiveScreen) => rgbaInput(screen.uprightSize.width, screen.uprightSize.height);
  // The next session's ffmpeg starts while its device is cleaned (clean() below).
  const standby = encoderStandby(path.join(options.dataDir, 'video-standby'), (serial, file) =>
    startFrameEncoder({ ffmpeg: ffmpegCommand, file, input: input(lookup(serial).screen), fps: VIRTUAL_VIDEO_FPS }),
  );
  const lookup = (serial: string) => {
    const device = devices.get(serial);
    const state = states.get(serial);
    const screen = screens.get(serial);
    if (device === undefined || state === undefined || screen === undefined)
      throw new Error(`no virtual device ${serial}`);
    return { device, state, screen };
  };

  return {
    name: 'virtual',
    async listDevices() {
      return options.devices.map((device) => ({ ...device, platform: device.osType, executionKinds: VIRTUAL_KINDS }));
    },
    async health(serial) {
      const { state } = lookup(serial);
      return state.hasHook('offline')
        ? { ok: false, reason: 'the device is offline (test hook offline)' }
        : { ok: true };
    },
    async execute(job, context) {
      const { device, state, screen } = lookup(job.serial);
      screen.show(home(device, state));
      context.step('PREPARING');
      if (job.deviceSettings !== null) state.applySettings(job.deviceSettings);
      switch (job.kind) {
        case 'server-side':
          return runServerSide(job, context, device, state, options.sandbox, screen);
        case 'crawler':
          return crawl(job, context, device, state, screen);
        case 'appium-client':
          return serveAppiumClient(job, context, device, state);
        case 'interactive':
          return serveInteractiveSession(job, context, device, state, screen);
        default:
          return {
            outcome: 'INFRA_ERROR',
            failReason: `virtual devices cannot run ${job.kind} tests; they need a real device`,
            testCases: null,
            exitCode: null,
            artifacts: [],
          };
      }
    },
    async clean(serial, kind) {
      const { device, state, screen } = lookup(serial);
      const report = state.clean(kind);
      screen.rotate('portrait');
      screen.show(home(device, state));
      if (findTool(ffmpegCommand) !== null) standby.prepare(serial);
      return report;
    },
    async record(serial, dir) {
      const { screen } = lookup(serial);
      const ffmpeg = findTool(ffmpegCommand);
      if (ffmpeg === null) return noRecording(missingToolMessage(ffmpegCommand, 'no video was recorded'));
      return recordFrames({
        ffmpeg,
        file: path.join(dir, 'video.mp4'),
        input: input(screen),
        fps: VIRTUAL_VIDEO_FPS,
        frame: () => screen.uprightRaster().data,
        encoder: standby.take(serial),
      });
    },
    missingTools() {
      return findTool(ffmpegCommand) === null
        ? [missingToolMessage(ffmpegCommand, 'device sessions on virtual devices will have no video')]
        : [];
    },
    async close() {
      await standby.close();
    },
  };
}
