/**
 * An interactive session on an iPhone (docs/api.md#interactive-sessions), through WebDriverAgent
 * started by go-ios (wda.ts) on whatever the phone shows: a tap, a long press and a swipe are
 * WDA touches, text goes to the focused field, home and the volume are WDA's pressButton, power
 * locks or wakes the screen, rotation is WDA's orientation, a URL opens as the system opens it.
 * An uploaded .ipa is re-signed and installed as a run's app is (install.ts); frames are WDA
 * screenshots and the log pane is `ios syslog`. Points come in screenshot pixels and go to WDA
 * in its points (pixels over the screen's scale). Exercised against the fake go-ios and WDA of
 * the tests only: docs/device-hosts.md#ios says what a real iPhone still has to prove.
 */
import path from 'node:path';
import type { Key } from '../../../domain/interactive.ts';
import {
  type DeviceInput,
  type ExecutionContext,
  type ExecutionResult,
  InputRefused,
  type InteractiveDevice,
  type Job,
} from '../../driver.ts';
import { interactiveResult } from '../../interactive-relay.ts';
import { udidArg } from './go-ios.ts';
import { syslogMessageOf } from './go-ios-output.ts';
import { type InstallDeps, Refusal, signAndInstall, unpackBuild } from './install.ts';
import { type Point, type WdaClient, startWda } from './wda.ts';

/** A WDA screenshot of a real iPhone takes a few hundred milliseconds: looking more often only queues them. */
const FRAME_INTERVAL_MS = 400;
/** Lines of the device log kept while the relay is slower than the phone logs. */
const LOG_BACKLOG_LINES = 5000;

const BUTTONS: Partial<Record<Key, 'home' | 'volumeup' | 'volumedown'>> = {
  home: 'home',
  volumeUp: 'volumeup',
  volumeDown: 'volumedown',
};

export interface IosInteractiveOptions extends InstallDeps {
  readonly udid: string;
  readonly displayName: string;
  readonly wdaReadyTimeoutMs?: number;
}

export async function serveInteractiveIos(
  job: Job,
  context: ExecutionContext,
  options: IosInteractiveOptions,
): Promise<ExecutionResult> {
  if (context.interactive === undefined) throw new Error('an interactive session without its channel');
  const { client, stop } = await startWda(options.goIos, options.udid, context.signal, options.wdaReadyTimeoutMs);
  let session: string | null = null;
  try {
    session = await client.createSession();
    const device = await iosInteractiveDevice(client, session, job, context, options);
    context.step('RUNNING');
    const end = await context.interactive.serve(device);
    return interactiveResult(end, `session on ${options.displayName}`);
  } finally {
    // What the user turned does not outlive the session: the next run starts upright and unlocked.
    if (session !== null) {
      await client.orientation(session, 'PORTRAIT').catch(() => undefined);
      if (await client.locked().catch(() => false)) await client.lock(false).catch(() => undefined);
      await client.deleteSession(session).catch(() => undefined);
    }
    await stop();
  }
}

export async function iosInteractiveDevice(
  client: WdaClient,
  session: string,
  job: Job,
  context: ExecutionContext,
  options: IosInteractiveOptions,
): Promise<InteractiveDevice> {
  const { goIos, udid } = options;
  const signal = context.signal;
  // The screen as turned now; asked again after each rotation (width and height swap).
  let screen = await client.screen();
  let installs = 0;

  const toPoint = (x: number, y: number, name = ''): Point => {
    const width = Math.round(screen.width * screen.scale);
    const height = Math.round(screen.height * screen.scale);
    if (x >= width || y >= height)
      throw new InputRefused(
        `The point ${name}(${x}, ${y}) is off the ${width}x${height} screen of ${options.displayName}`,
      );
    return { x: x / screen.scale, y: y / screen.scale };
  };
  const frame = () => client.screenshot(session);

  const key = async (name: Key) => {
    const button = BUTTONS[name];
    if (button !== undefined) return client.pressButton(session, button);
    switch (name) {
      case 'power':
        return client.lock(!(await client.locked()));
      case 'enter':
        return client.keys(session, '\n');
      default:
        throw new InputRefused(
          `iPhones have no ${name} key: use the app's own back button or swipe from the left edge (home, power, volumeUp, volumeDown and enter work)`,
        );
    }
  };

  const install = async (app: Extract<DeviceInput, { action: 'install' }>['app']) => {
    installs += 1;
    const dir = path.join(job.workDir, 'interactive-apps', String(installs));
    let bundle;
    try {
      bundle = await unpackBuild(app, path.join(dir, 'app'), context);
    } catch (error) {
      if (error instanceof Refusal) throw new InputRefused(error.message);
      throw error;
    }
    await signAndInstall(options, udid, bundle, path.join(dir, 'signed'), signal);
    return { appId: bundle.bundleId };
  };

  return {
    frameIntervalMs: FRAME_INTERVAL_MS,
    frame,
    log: (stop) => syslog(stop),
    async input(input: DeviceInput) {
      switch (input.action) {
        case 'tap': {
          const at = toPoint(input.x, input.y);
          await client.tap(session, at.x, at.y);
          return null;
        }
        case 'longPress': {
          const at = toPoint(input.x, input.y);
          await client.touchAndHold(session, at.x, at.y, input.durationMs / 1000);
          return null;
        }
        case 'swipe':
          await client.swipe(
            session,
            toPoint(input.x, input.y),
            toPoint(input.toX, input.toY, 'to '),
            input.durationMs,
          );
          return null;
        case 'text':
          await client.keys(session, input.text);
          return null;
        case 'key':
          await key(input.key);
          return null;
        case 'rotate':
          await client.orientation(session, input.orientation === 'landscape' ? 'LANDSCAPE' : 'PORTRAIT');
          screen = await client.screen();
          return null;
        case 'install':
          return install(input.app);
        case 'openUrl':
          await client.openUrl(session, input.url);
          return null;
        case 'screenshot':
          return (await frame()).toString('base64');
      }
    },
  };

  /** `ios syslog`, line by line, until `stop`; a backlog beyond LOG_BACKLOG_LINES loses its oldest lines. */
  async function* syslog(stop: AbortSignal): AsyncGenerator<string> {
    const lines: string[] = [];
    let wake: (() => void) | null = null;
    let exited = false;
    const nudge = () => wake?.();
    const started = goIos.start(['syslog', udidArg(udid)], {
      signal: stop,
      onStdoutLine: (line) => {
        lines.push(syslogMessageOf(line));
        if (lines.length > LOG_BACKLOG_LINES) lines.shift();
        nudge();
      },
    });
    void started.exited.then(() => {
      exited = true;
      nudge();
    });
    stop.addEventListener('abort', nudge, { once: true });
    try {
      while (!stop.aborted) {
        const line = lines.shift();
        if (line !== undefined) {
          yield line;
          continue;
        }
        if (exited) throw new Error('go-ios syslog ended');
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (stop.aborted || exited || lines.length > 0) resolve();
        });
        wake = null;
      }
    } finally {
      stop.removeEventListener('abort', nudge);
      await started.stop();
    }
  }
}
