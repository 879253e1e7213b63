/**
 * An interactive session on a virtual device (docs/api.md#interactive-sessions), answered from
 * its UI model: a tap lands on what the screen drew there (render.ts hitTest): an app on the home
 * screen opens it, a field takes the focus and then the typed text, a toggle flips, a button does
 * what its label says (Continue/Next: the app's next screen; Sign in: signs in as the name typed).
 * Keys and the volume show as the device would tell them (back, home, a banner); rotation turns
 * the screen (drawn in landscape, render.ts); an installed app joins the home screen; a URL opens
 * the browser. Every change is on the LiveScreen,
 * so frames, screenshots and the video show it.
 */
import path from 'node:path';
import {
  type DeviceInput,
  type ExecutionContext,
  type ExecutionResult,
  InputRefused,
  type InteractiveDevice,
  type Job,
} from '../../driver.ts';
import { interactiveResult } from '../../interactive-relay.ts';
import type { DeviceState } from './device-state.ts';
import type { VirtualDeviceSpec } from './devices.ts';
import type { LiveScreen } from './screen/live.ts';
import { hitTest } from './screen/render.ts';
import { type Element, type Screen, appLabel, appScreen, homeScreen, withBanner } from './screen/ui-model.ts';

/** Interactive frame rate: the relay sends a frame only when it changed. */
const FRAME_INTERVAL_MS = 50;
const BROWSERS = { ANDROID: 'com.android.chrome', IOS: 'com.apple.mobilesafari' } as const;

export async function serveInteractiveSession(
  job: Job,
  context: ExecutionContext,
  device: VirtualDeviceSpec,
  state: DeviceState,
  screen: LiveScreen,
): Promise<ExecutionResult> {
  if (context.interactive === undefined) throw new Error('an interactive session without its channel');
  context.step('RUNNING');
  const end = await context.interactive.serve(virtualInteractiveDevice(device, state, screen));
  return interactiveResult(end, `session on ${device.displayName}`);
}

interface Shown {
  readonly appId: string | null;
  /** Which of the app's screens (an index into its declared screens). */
  readonly at: number;
  screen: Screen;
}

export function virtualInteractiveDevice(
  device: VirtualDeviceSpec,
  state: DeviceState,
  live: LiveScreen,
): InteractiveDevice {
  const platform = device.osType;
  const declared = new Map<string, readonly string[]>();
  const home = (): Shown => ({
    appId: null,
    at: 0,
    screen: homeScreen(platform, device.displayName, state.installedApps()),
  });
  const stack: Shown[] = [home()];
  let focus: number | null = null;
  let screenOn = true;
  let volume = 7;
  const top = () => stack.at(-1)!;
  const show = () => live.show(screenOn ? top().screen : { ...blank(), banner: null });
  const blank = (): Screen => ({ platform, appId: null, title: '', elements: [], banner: null });
  const banner = (text: string, tone: 'info' | 'ok' | 'fail' = 'info') => {
    top().screen = withBanner(top().screen, text, tone);
  };
  const screensOf = (appId: string) =>
    declared.get(appId) ?? [/settings|preferences/i.test(appId) ? 'SettingsActivity' : 'MainActivity'];
  const open = (appId: string, at = 0) => {
    focus = null;
    const names = screensOf(appId);
    stack.push({ appId, at, screen: appScreen(platform, appId, names[at] ?? names[0]!) });
  };
  const setElement = (index: number, element: Element) => {
    const shown = top();
    shown.screen = {
      ...shown.screen,
      elements: shown.screen.elements.map((old, i) => (i === index ? element : old)),
      banner: null,
    };
  };
  const fieldValue = (label: RegExp) =>
    top()
      .screen.elements.filter((e): e is Extract<Element, { kind: 'field' }> => e.kind === 'field')
      .find((e) => label.test(e.label))?.value ?? '';

  const press = (label: string) => {
    const shown = top();
    if (shown.appId === null) return banner(`${label}`);
    if (/^(continue|next)$/i.test(label)) {
      const names = screensOf(shown.appId);
      if (shown.at + 1 < names.length) return open(shown.appId, shown.at + 1);
      return banner('You reached the last screen', 'ok');
    }
    if (/sign in|log in/i.test(label)) {
      const name = fieldValue(/user|email|name/i);
      return name === '' ? banner('Enter a user name first', 'fail') : banner(`Signed in as ${name}`, 'ok');
    }
    if (/save/i.test(label)) return banner('Saved', 'ok');
    return banner(`${label} pressed`);
  };

  const tap = (x: number, y: number, long: boolean) => {
    const hit = hitTest(top().screen, live.size, x, y);
    if (hit === null) return;
    if (hit.kind === 'navigation') return key(hit.key === 'recents' ? 'menu' : hit.key);
    const element = top().screen.elements[hit.index]!;
    if (long) return banner(`Long press on ${describe(element, hit.row)}`);
    switch (element.kind) {
      case 'button':
        return press(element.label);
      case 'field':
        focus = hit.index;
        return setElement(hit.index, element);
      case 'toggle':
        return setElement(hit.index, { ...element, on: !element.on });
      case 'list': {
        const item = element.items[hit.row ?? -1];
        if (item === undefined) return;
        if (top().appId === null) {
          const appId = state.installedApps()[hit.row!];
          if (appId !== undefined) return open(appId);
        }
        return banner(`Opened ${item}`);
      }
      case 'text':
        return;
    }
  };

  const type = (text: string) => {
    const fields = top().screen.elements.flatMap((e, i) => (e.kind === 'field' ? [i] : []));
    const index = focus !== null && fields.includes(focus) ? focus : fields[0];
    if (index === undefined) return banner('No text field here: tap one first', 'fail');
    focus = index;
    const field = top().screen.elements[index] as Extract<Element, { kind: 'field' }>;
    setElement(index, { ...field, value: field.value + text });
  };

  const key = (name: string) => {
    switch (name) {
      case 'back':
        focus = null;
        if (stack.length > 1) stack.pop();
        return;
      case 'home':
        focus = null;
        stack.splice(0, stack.length, home());
        return;
      case 'power':
        screenOn = !screenOn;
        return;
      case 'volumeUp':
      case 'volumeDown':
        volume = Math.max(0, Math.min(15, volume + (name === 'volumeUp' ? 1 : -1)));
        return banner(`Volume ${volume}`);
      case 'enter': {
        const primary = top().screen.elements.find((e) => e.kind === 'button' && e.primary === true);
        return primary?.kind === 'button' ? press(primary.label) : undefined;
      }
      default:
        return banner('Recent apps');
    }
  };

  const inside = (x: number, y: number, name = '') => {
    const { width, height } = live.size;
    if (x >= width || y >= height)
      throw new InputRefused(
        `The point ${name}(${x}, ${y}) is off the ${width}x${height} screen of ${device.displayName}`,
      );
  };

  const apply = (input: DeviceInput): unknown => {
    // A screen that is off takes only the power key (and screenshots, of its black).
    if (!screenOn && !(input.action === 'key' && input.key === 'power') && input.action !== 'screenshot') return null;
    switch (input.action) {
      case 'tap':
      case 'longPress':
        inside(input.x, input.y);
        tap(input.x, input.y, input.action === 'longPress');
        return null;
      case 'swipe': {
        inside(input.x, input.y);
        inside(input.toX, input.toY, 'to ');
        const dx = input.toX - input.x;
        const dy = input.toY - input.y;
        const way = Math.abs(dx) > Math.abs(dy) ? (dx < 0 ? 'left' : 'right') : dy < 0 ? 'up' : 'down';
        // From the left edge to the right is the system's back gesture.
        if (way === 'right' && input.x < 16) key('back');
        else banner(`Swiped ${way}`);
        return null;
      }
      case 'text':
        type(input.text);
        return null;
      case 'key':
        key(input.key);
        return null;
      case 'rotate':
        live.rotate(input.orientation);
        return null;
      case 'install': {
        const appId =
          input.app.properties.package_name ?? input.app.properties.bundle_identifier ?? path.basename(input.app.name);
        state.install(input.app.path, appId);
        const screens = (input.app.properties.activities ?? input.app.properties.screens ?? '')
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== '');
        const main = input.app.properties.main_activity;
        if (main !== undefined && screens.includes(main)) screens.unshift(...screens.splice(screens.indexOf(main), 1));
        if (screens.length > 0) declared.set(appId, screens);
        stack[0] = home();
        banner(`Installed ${appLabel(appId)}`, 'ok');
        return { appId };
      }
      case 'openUrl': {
        focus = null;
        const url = new URL(input.url);
        stack.push({
          appId: BROWSERS[platform],
          at: 0,
          screen: {
            platform,
            appId: BROWSERS[platform],
            title: url.host,
            elements: [
              { kind: 'field', label: 'Address', value: input.url },
              { kind: 'text', text: `Opened ${input.url}` },
            ],
            banner: null,
          },
        });
        return null;
      }
      case 'screenshot':
        return live.png().toString('base64');
    }
  };

  // The device's log: a line per input, and what came to the front, as logcat would say it.
  const log = new LogLines();
  const shownApp = () => (screenOn ? (top().appId ?? 'launcher') : 'screen off');

  show();
  return {
    frameIntervalMs: FRAME_INTERVAL_MS,
    async input(input) {
      const before = shownApp();
      const value = apply(input);
      show();
      log.add('I', 'Input', input.action === 'text' ? `text (${input.text.length} characters)` : describeInput(input));
      if (shownApp() !== before) log.add('I', 'ActivityManager', `Displayed ${shownApp()}`);
      return value;
    },
    log: (signal) => log.follow(signal),
    async frame() {
      return live.png();
    },
  };
}

function describe(element: Element, row: number | null): string {
  switch (element.kind) {
    case 'button':
    case 'field':
    case 'toggle':
      return element.label;
    case 'list':
      return element.items[row ?? 0] ?? 'the list';
    case 'text':
      return element.text;
  }
}

function describeInput(input: DeviceInput): string {
  switch (input.action) {
    case 'tap':
    case 'longPress':
      return `${input.action} ${input.x},${input.y}`;
    case 'swipe':
      return `swipe ${input.x},${input.y} -> ${input.toX},${input.toY}`;
    case 'key':
      return `key ${input.key}`;
    case 'rotate':
      return `rotate ${input.orientation}`;
    case 'install':
      return `install ${input.app.name}`;
    case 'openUrl':
      return `view ${input.url}`;
    default:
      return input.action;
  }
}

/** Lines as `logcat -v time` writes them, kept for one follower. */
class LogLines {
  private readonly lines: string[] = [];
  private wake: (() => void) | null = null;

  add(level: string, tag: string, message: string): void {
    const now = new Date();
    const pad = (value: number, width = 2) => String(value).padStart(width, '0');
    const stamp = `${pad(now.getUTCMonth() + 1)}-${pad(now.getUTCDate())} ${pad(now.getUTCHours())}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())}.${pad(now.getUTCMilliseconds(), 3)}`;
    this.lines.push(`${stamp} ${level}/${tag}: ${message}`);
    this.wake?.();
  }

  async *follow(signal: AbortSignal): AsyncGenerator<string> {
    while (!signal.aborted) {
      const line = this.lines.shift();
      if (line !== undefined) {
        yield line;
        continue;
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          this.wake = null;
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
