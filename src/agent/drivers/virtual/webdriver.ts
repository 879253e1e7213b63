/**
 * A virtual device's own WebDriver (docs/api.md#appium-client-side), from the UI model the crawler
 * uses: the app's declared activities (Android) or screens (iOS), each one screen with a title, a
 * text field, a Submit button that greets what was typed, and a Next button to the next screen.
 * Serves what Appium clients use most: sessions, find element (id, accessibility id, xpath, class
 * name), click, send keys, clear, text, attributes, page source, screenshot, back, app state.
 */
import type { WebDriverHandler, WebDriverReply } from '../../driver.ts';
import { SCREEN_SIZES, renderScreen } from './screen/render.ts';
import { type Screen, homeScreen } from './screen/ui-model.ts';
import type { VirtualDeviceSpec } from './devices.ts';

const ELEMENT_KEY = 'element-6066-11e4-a52e-4f735466cecf';

interface Element {
  readonly key: string;
  readonly className: string;
  readonly resourceId: string;
  readonly contentDesc: string;
  text: string;
  readonly clickable: boolean;
}

export interface VirtualApp {
  readonly appId: string;
  /** Activity or screen names, in order; the first is the launch screen. */
  readonly screens: readonly string[];
}

const ok = (value: unknown = null): WebDriverReply => ({ status: 200, body: { value } });
const error = (status: number, code: string, message: string): WebDriverReply => ({
  status,
  body: { value: { error: code, message, stacktrace: '' } },
});

export function virtualWebDriver(device: VirtualDeviceSpec, app: VirtualApp | null): WebDriverHandler {
  const android = device.osType === 'ANDROID';
  const cls = android
    ? { text: 'android.widget.TextView', edit: 'android.widget.EditText', button: 'android.widget.Button' }
    : { text: 'XCUIElementTypeStaticText', edit: 'XCUIElementTypeTextField', button: 'XCUIElementTypeButton' };
  const appId = app?.appId ?? (android ? 'com.android.launcher' : 'com.apple.springboard');
  const screens = app === null || app.screens.length === 0 ? ['Home'] : app.screens;
  /** The screens visited, the current one last; empty when the app is in the background. */
  const history: number[] = [0];
  let appState = app === null ? 1 : 4;
  let elements: Element[] = [];
  let generation = 0;
  const shortName = (screen: string) => screen.split('.').pop() ?? screen;

  /** The current screen's elements, new ids each time the screen changes (old ones go stale). */
  const render = () => {
    generation += 1;
    const screen = shortName(screens[history.at(-1) ?? 0]!);
    const id = (name: string) => (android ? `${appId}:id/${name}` : name);
    const make = (name: string, className: string, text: string, clickable = false): Element => ({
      key: `${generation}-${name}`,
      className,
      resourceId: id(name),
      contentDesc: name,
      text,
      clickable,
    });
    elements = [
      make('title', cls.text, screen),
      make('input', cls.edit, ''),
      make('submit', cls.button, 'Submit', true),
      make('message', cls.text, ''),
      make('next', cls.button, 'Next', true),
    ];
  };
  render();

  /** What the device shows, drawn as its screenshots and videos draw it (screen/render.ts). */
  const drawn = () => {
    const platform = android ? 'ANDROID' : 'IOS';
    const byName = (name: string) => elements.find((element) => element.contentDesc === name)?.text ?? '';
    const shown: Screen =
      appState === 4
        ? {
            platform,
            appId,
            title: byName('title'),
            elements: [
              { kind: 'field', label: 'Input', value: byName('input') },
              { kind: 'button', label: 'Submit', primary: true },
              { kind: 'text', text: byName('message'), tone: 'strong' },
              { kind: 'button', label: 'Next' },
            ],
            banner: null,
          }
        : homeScreen(platform, device.displayName, [appId]);
    const now = new Date();
    const time = `${String(now.getUTCHours()).padStart(2, '0')}:${String(now.getUTCMinutes()).padStart(2, '0')}`;
    return renderScreen(shown, SCREEN_SIZES[platform], { time, battery: 80 }).png();
  };

  const source = () => {
    const attrs = (element: Element) =>
      android
        ? `class="${element.className}" resource-id="${escape(element.resourceId)}" content-desc="${escape(element.contentDesc)}" text="${escape(element.text)}" clickable="${element.clickable}" enabled="true" displayed="true" package="${escape(appId)}"`
        : `type="${element.className}" name="${escape(element.contentDesc)}" label="${escape(element.text)}" value="${escape(element.text)}" enabled="true" visible="true"`;
    const nodes = elements.map((element) => `    <${element.className} ${attrs(element)}/>`).join('\n');
    const root = android ? 'android.widget.FrameLayout' : 'XCUIElementTypeApplication';
    const inner = appState === 4 ? `\n${nodes}\n  ` : '';
    return `<?xml version="1.0" encoding="UTF-8"?>\n<hierarchy>\n  <${root} package="${escape(appId)}">${inner}</${root}>\n</hierarchy>\n`;
  };

  const attribute = (element: Element, name: string): string | null => {
    switch (name) {
      case 'resource-id':
      case 'resourceId':
        return element.resourceId;
      case 'content-desc':
      case 'contentDescription':
      case 'name':
        return element.contentDesc;
      case 'text':
      case 'label':
      case 'value':
        return element.text;
      case 'class':
      case 'className':
      case 'type':
        return element.className;
      case 'clickable':
        return String(element.clickable);
      case 'enabled':
      case 'displayed':
      case 'visible':
        return 'true';
      case 'package':
        return appId;
      default:
        return null;
    }
  };

  const find = (using: string, value: string): Element[] => {
    if (appState !== 4) return [];
    switch (using) {
      case 'id':
        return elements.filter(
          (e) => e.resourceId === value || e.resourceId.endsWith(`:id/${value}`) || e.contentDesc === value,
        );
      case 'accessibility id':
        return elements.filter((e) => e.contentDesc === value);
      case 'class name':
        return elements.filter((e) => e.className === value);
      case 'xpath':
        return byXPath(value);
      case 'css selector':
        return byCss(value);
      default:
        return [];
    }
  };

  /** `//Class`, `//*`, each with an optional `[@attr="v"]` or `[contains(@attr, "v")]`. */
  const byXPath = (xpath: string): Element[] => {
    const match =
      /^\/\/([\w.*]+)(?:\[(?:@([\w-]+)\s*=\s*(["'])(.*?)\3|contains\(\s*@([\w-]+)\s*,\s*(["'])(.*?)\6\s*\))\])?$/.exec(
        xpath.trim(),
      );
    if (match === null) throw new XPathError(xpath);
    const [, tag, attr, , equals, containsAttr, , contains] = match;
    return elements.filter((element) => {
      if (tag !== '*' && tag !== element.className) return false;
      if (attr !== undefined) return attribute(element, attr) === equals;
      if (containsAttr !== undefined) return (attribute(element, containsAttr) ?? '').includes(contains!);
      return true;
    });
  };

  /**
   * What Selenium's By.id, By.name and By.className send, since W3C has no such strategies
   * (`*[id="x"]`, `*[name="x"]`, `.a\\.b`), and `#x`: the CSS UiAutomator2 also reads.
   */
  const byCss = (selector: string): Element[] => {
    const css = selector.trim();
    const unescape = (text: string) => text.replace(/\\(.)/g, '$1');
    const byAttr = /^\*?\[(id|name)\s*=\s*(["'])(.*)\2\]$/.exec(css);
    if (byAttr !== null) return find(byAttr[1] === 'id' ? 'id' : 'accessibility id', unescape(byAttr[3]!));
    if (/^#\S+$/.test(css)) return find('id', unescape(css.slice(1)));
    if (/^\.\S+$/.test(css)) return find('class name', unescape(css.slice(1)));
    return [];
  };

  const click = (element: Element) => {
    const name = element.contentDesc;
    if (name === 'submit') {
      const input = elements.find((e) => e.contentDesc === 'input')!;
      elements.find((e) => e.contentDesc === 'message')!.text = `Hello, ${input.text}!`;
    } else if (name === 'next') {
      history.push(((history.at(-1) ?? 0) + 1) % screens.length);
      render();
    }
  };

  const reference = (element: Element) => ({ [ELEMENT_KEY]: element.key, ELEMENT: element.key });
  const noSuchElement = (using: string, value: string) =>
    error(404, 'no such element', `No element on the screen matches ${using} ${JSON.stringify(value)}`);

  return async ({ method, path, body }) => {
    const parts = path.split('/').filter((part) => part !== '');
    if (method === 'POST' && parts.length === 1 && parts[0] === 'session')
      return ok({
        sessionId: `virtual-${device.serial}`,
        capabilities: {
          platformName: android ? 'Android' : 'iOS',
          'appium:automationName': 'DeviceCloudVirtual',
          'appium:deviceName': device.displayName,
          'appium:platformVersion': device.releaseVersion,
          'appium:udid': device.serial,
          ...(app !== null && { [android ? 'appium:appPackage' : 'appium:bundleId']: appId }),
        },
      });
    if (parts[0] !== 'session' || parts.length < 2)
      return error(404, 'unknown command', `Unknown command ${method} ${path}`);
    const [, , command] = parts;
    // Element commands name the element third: element/{id}/click.
    const elementId = command === 'element' ? parts[3] : undefined;
    const rest = parts.slice(5);
    const args = (body ?? {}) as Record<string, unknown>;
    const route =
      elementId === undefined
        ? `${method} ${parts.slice(2).join('/')}`
        : `${method} element/:id${parts[4] === undefined ? '' : `/${parts[4]}`}`;
    const element = () => {
      const found = elements.find((candidate) => candidate.key === elementId);
      if (found === undefined) throw new StaleError(elementId ?? '');
      return found;
    };
    try {
      if (method === 'DELETE' && command === undefined) return ok();
      switch (route) {
        case 'GET source':
          return ok(source());
        case 'GET screenshot':
          return ok(drawn().toString('base64'));
        case 'POST element':
        case 'POST elements':
        case 'POST element/:id/element':
        case 'POST element/:id/elements': {
          if (elementId !== undefined) element();
          const using = String(args.using ?? '');
          const value = String(args.value ?? '');
          const found = find(using, value);
          if (route.endsWith('elements')) return ok(found.map(reference));
          return found[0] === undefined ? noSuchElement(using, value) : ok(reference(found[0]));
        }
        case 'POST element/:id/click':
          click(element());
          return ok();
        case 'POST element/:id/value': {
          const target = element();
          const text = Array.isArray(args.value) ? args.value.join('') : String(args.text ?? '');
          target.text += text;
          return ok();
        }
        case 'POST element/:id/clear':
          element().text = '';
          return ok();
        case 'GET element/:id/text':
          return ok(element().text);
        case 'GET element/:id/name':
          return ok(element().className);
        case 'GET element/:id/attribute':
          return ok(attribute(element(), decodeURIComponent(rest[0] ?? '')));
        case 'GET element/:id/displayed':
        case 'GET element/:id/enabled':
          element();
          return ok(true);
        case 'GET element/:id/selected':
          element();
          return ok(false);
        case 'GET element/:id/rect': {
          const index = elements.indexOf(element());
          return ok({ x: 0, y: 100 + index * 120, width: 1080, height: 100 });
        }
        case 'POST back':
          if (history.length > 1) history.pop();
          else appState = 3;
          render();
          return ok();
        case 'GET timeouts':
          return ok({ implicit: 0, pageLoad: 300000, script: 30000 });
        case 'POST timeouts':
        case 'POST appium/settings':
          return ok();
        case 'GET window/rect':
          return ok({ x: 0, y: 0, width: 1080, height: 2400 });
        case 'GET orientation':
          return ok('PORTRAIT');
        case 'POST appium/device/app_state':
          return ok(String(args.appId ?? args.bundleId) === appId ? appState : 1);
        case 'POST appium/device/activate_app':
        case 'POST appium/device/terminate_app': {
          const target = String(args.appId ?? args.bundleId);
          if (target !== appId || app === null) return error(400, 'invalid argument', `${target} is not installed`);
          appState = route.endsWith('activate_app') ? 4 : 1;
          if (appState === 4) history.splice(0, history.length, 0);
          render();
          return ok(route.endsWith('terminate_app') ? true : null);
        }
        case 'POST execute/sync':
          return executeScript(String(args.script ?? ''), (args.args as unknown[]) ?? []);
        default:
          return error(404, 'unknown command', `The virtual device does not know ${method} ${path}`);
      }
    } catch (failure) {
      if (failure instanceof StaleError)
        return error(404, 'stale element reference', `Element ${failure.elementId} is no longer on the screen`);
      if (failure instanceof XPathError)
        return error(
          400,
          'invalid selector',
          `The virtual device understands //Class[@attr="value"] xpaths, not ${failure.xpath}`,
        );
      throw failure;
    }
  };

  function executeScript(script: string, args: unknown[]): WebDriverReply {
    const options = (args[0] ?? {}) as { appId?: string; bundleId?: string };
    const target = options.appId ?? options.bundleId;
    if (script === 'mobile: queryAppState') return ok(target === appId ? appState : 1);
    return error(
      404,
      'unknown command',
      `The virtual device does not run the script ${JSON.stringify(script.slice(0, 80))}`,
    );
  }
}

class StaleError extends Error {
  constructor(readonly elementId: string) {
    super(elementId);
  }
}

class XPathError extends Error {
  constructor(readonly xpath: string) {
    super(xpath);
  }
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
