/**
 * A fake WebDriverAgent, served by the fake `ios runwda`: the HTTP routes the crawler uses, over a
 * small model of the app in front, built from the app's Info.plist (keys that are not Apple's):
 *
 *   DCScreens        the app's screens; the first one lists buttons to the others, each of which
 *                    has a back button and a "Refresh" button that stays on the screen
 *   DCSignIn         the app opens on a sign-in form (user name, password, "Sign in")
 *   DCCrashOnScreen  opening this screen crashes the app: it leaves the front and a crash report
 *                    of its executable appears on the device
 *
 * The tree has WDA's JSON source shape (type, name, label, value, rect, isEnabled/isVisible "1").
 *
 * The device's own controls, as appium/WebDriverAgent's routes take them: pressButton (home,
 * volumeup, volumedown), lock/unlock/locked, orientation (the screen's size swaps in landscape),
 * url (web addresses open Safari), touchAndHold, and W3C actions (a finger that moves between
 * down and up is a swipe, not a tap). A locked screen takes no touches. Every request answered is
 * recorded (state.mjs).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { PNG } from 'pngjs';
import { recordWdaRequest } from './state.mjs';

const WIDTH = 390;
const HEIGHT = 844;
/** Pixels a point: an iPhone 15's. */
const SCALE = 3;
const SPRINGBOARD = 'com.apple.springboard';
const SAFARI = 'com.apple.mobilesafari';
const ORIENTATIONS = [
  'PORTRAIT',
  'LANDSCAPE',
  'UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT',
  'UIA_DEVICE_ORIENTATION_PORTRAIT_UPSIDEDOWN',
];
const BUTTONS = ['home', 'volumeup', 'volumedown'];

export function screenshotPng(label) {
  let hash = 0;
  for (const char of label) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  const png = new PNG({ width: 39, height: 84 });
  for (let at = 0; at < png.data.length; at += 4) {
    png.data[at] = 60 + (hash & 0x7f);
    png.data[at + 1] = 60 + ((hash >> 8) & 0x7f);
    png.data[at + 2] = 60 + ((hash >> 16) & 0x7f);
    png.data[at + 3] = 255;
  }
  return PNG.sync.write(png);
}

const node = (type, attrs, children = []) => ({
  type,
  rawIdentifier: attrs.name ?? null,
  name: attrs.name ?? null,
  label: attrs.label ?? null,
  value: attrs.value ?? null,
  rect: attrs.rect ?? { x: 0, y: 0, width: 0, height: 0 },
  frame: `{{${attrs.rect?.x ?? 0}, ${attrs.rect?.y ?? 0}}, {${attrs.rect?.width ?? 0}, ${attrs.rect?.height ?? 0}}}`,
  isEnabled: '1',
  isVisible: '1',
  ...(children.length > 0 ? { children } : {}),
});

export async function serveWda(udid, { readState, changeDevice }) {
  const sessions = new Set();
  /** Per app: the screen shown, whether it is signed in, what was typed into which field. */
  const apps = new Map();
  let focused = null;

  const device = () => readState().devices.find((candidate) => candidate.udid === udid);
  const foreground = () => device()?.foreground ?? SPRINGBOARD;
  const orientation = () => device()?.orientation ?? 'PORTRAIT';
  /** What a screenshot shows: a different picture for each app screen, turn and lock. */
  const shown = () =>
    device()?.locked
      ? 'locked'
      : `${foreground()}:${apps.get(foreground())?.screen ?? ''}:${orientation().includes('LANDSCAPE') ? 'landscape' : ''}`;
  const number = (body, name) => {
    if (typeof body[name] !== 'number')
      throw Object.assign(new Error(`'${name}' must be a number`), { status: 400, error: 'invalid argument' });
  };
  const modelOf = (bundleId) => {
    const info = device().apps[bundleId].info;
    const screens = Array.isArray(info.DCScreens) && info.DCScreens.length > 0 ? info.DCScreens.map(String) : ['Home'];
    return { info, screens, signIn: info.DCSignIn === true, crashOn: info.DCCrashOnScreen ?? null };
  };
  const launch = (bundleId) => {
    const model = modelOf(bundleId);
    const previous = apps.get(bundleId);
    apps.set(bundleId, {
      screen: model.signIn && !previous?.signedIn ? 'Sign in' : model.screens[0],
      signedIn: previous?.signedIn ?? false,
      fields: {},
    });
    changeDevice(udid, (next) => {
      next.foreground = bundleId;
    });
  };

  const tree = () => {
    const bundleId = foreground();
    if (bundleId === SPRINGBOARD || !device().apps[bundleId]) {
      return node(
        'Application',
        { name: 'SpringBoard', label: ' ', rect: { x: 0, y: 0, width: WIDTH, height: HEIGHT } },
        [node('Icon', { name: 'Safari', label: 'Safari', rect: { x: 20, y: 700, width: 64, height: 64 } })],
      );
    }
    const model = modelOf(bundleId);
    const app = apps.get(bundleId);
    const children = [];
    const bar = (title, back) =>
      node('NavigationBar', { name: title, rect: { x: 0, y: 47, width: WIDTH, height: 44 } }, [
        ...(back
          ? [node('Button', { name: 'BackButton', label: back, rect: { x: 0, y: 47, width: 90, height: 44 } })]
          : []),
        node('StaticText', { label: title, rect: { x: 150, y: 58, width: 90, height: 22 } }),
      ]);
    if (app.screen === 'Sign in') {
      children.push(
        bar('Sign in', null),
        node('TextField', {
          name: 'username',
          value: app.fields.username ?? 'User name',
          rect: { x: 20, y: 200, width: 350, height: 44 },
        }),
        node('SecureTextField', {
          name: 'password',
          value: app.fields.password ? '•'.repeat(app.fields.password.length) : 'Password',
          rect: { x: 20, y: 260, width: 350, height: 44 },
        }),
        node('Button', { name: 'signIn', label: 'Sign in', rect: { x: 20, y: 330, width: 350, height: 50 } }),
      );
    } else if (app.screen === model.screens[0]) {
      children.push(
        bar(model.screens[0], null),
        node('StaticText', {
          label: `Welcome to ${model.info.CFBundleDisplayName ?? model.info.CFBundleName}`,
          rect: { x: 20, y: 120, width: 350, height: 30 },
        }),
      );
      model.screens.slice(1).forEach((screen, index) =>
        children.push(
          node('Button', {
            name: screen,
            label: screen,
            rect: { x: 20, y: 200 + index * 60, width: 350, height: 44 },
          }),
        ),
      );
    } else {
      children.push(
        bar(app.screen, model.screens[0]),
        node('StaticText', { label: `This is ${app.screen}`, rect: { x: 20, y: 120, width: 350, height: 30 } }),
        node('Button', { name: 'refresh', label: 'Refresh', rect: { x: 20, y: 200, width: 350, height: 44 } }),
      );
    }
    return node(
      'Application',
      {
        name: model.info.CFBundleDisplayName ?? model.info.CFBundleName,
        label: model.info.CFBundleName,
        rect: { x: 0, y: 0, width: WIDTH, height: HEIGHT },
      },
      [node('Window', { rect: { x: 0, y: 0, width: WIDTH, height: HEIGHT } }, children)],
    );
  };

  const hit = (root, x, y) => {
    let found = null;
    const visit = (candidate) => {
      const { rect } = candidate;
      if (x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height) found = candidate;
      for (const child of candidate.children ?? []) visit(child);
    };
    visit(root);
    return found;
  };

  const tap = (x, y) => {
    if (device().locked) return;
    const bundleId = foreground();
    const target = hit(tree(), x, y);
    if (bundleId === SPRINGBOARD || target === null) return;
    const model = modelOf(bundleId);
    const app = apps.get(bundleId);
    if (target.type === 'TextField' || target.type === 'SecureTextField') {
      focused = target.name;
      return;
    }
    if (target.type !== 'Button') return;
    focused = null;
    if (target.name === 'signIn') {
      if (app.fields.username && app.fields.password) {
        app.signedIn = true;
        app.screen = model.screens[0];
      }
    } else if (target.name === 'BackButton') app.screen = model.screens[0];
    else if (model.screens.includes(target.name)) {
      if (target.name === model.crashOn) {
        apps.delete(bundleId);
        changeDevice(udid, (next) => {
          next.foreground = null;
          const executable = next.apps[bundleId].info.CFBundleExecutable;
          next.crashReports.push({
            name: `${executable}-2026-01-01-12${String(next.crashReports.length).padStart(4, '0')}.ips`,
            content: `{"app_name":"${executable}","bundleID":"${bundleId}","bug_type":"309"}\nException Type:  EXC_BAD_ACCESS (SIGSEGV)\n`,
          });
        });
        return;
      }
      app.screen = target.name;
    }
  };

  const routes = [
    [
      'GET',
      /^\/status$/,
      () => ({
        value: {
          ready: true,
          message: 'WebDriverAgent is ready to accept commands',
          state: 'success',
          os: { name: 'iOS', version: device().productVersion },
          build: { productBundleIdentifier: 'com.facebook.WebDriverAgentRunner' },
        },
        sessionId: null,
      }),
    ],
    [
      'POST',
      /^\/session$/,
      (body) => {
        const bundleId = body?.capabilities?.alwaysMatch?.bundleId;
        if (bundleId !== undefined && !device().apps[bundleId])
          throw Object.assign(new Error(`${bundleId} is not installed on the device`), {
            status: 500,
            error: 'session not created',
          });
        const id = randomUUID().toUpperCase();
        sessions.add(id);
        if (bundleId !== undefined) launch(bundleId);
        return {
          value: {
            sessionId: id,
            capabilities: {
              device: 'iphone',
              sdkVersion: device().productVersion,
              CFBundleIdentifier: bundleId ?? null,
            },
          },
          sessionId: id,
        };
      },
    ],
    ['GET', /^\/session\/([^/]+)\/source$/, () => ({ value: tree() })],
    [
      'GET',
      /^\/session\/([^/]+)\/wda\/activeAppInfo$/,
      () => ({ value: { bundleId: foreground(), name: '', pid: 1212, processArguments: {} } }),
    ],
    [
      'POST',
      /^\/session\/([^/]+)\/actions$/,
      (body) => {
        for (const chain of body.actions ?? []) {
          const steps = chain.actions ?? [];
          const moves = steps.filter((action) => action.type === 'pointerMove');
          // A finger that moved between down and up swiped; the model has nothing to scroll.
          if (moves.length === 1 && steps.some((action) => action.type === 'pointerUp')) tap(moves[0].x, moves[0].y);
        }
        return { value: null };
      },
    ],
    [
      'POST',
      /^\/session\/([^/]+)\/wda\/keys$/,
      (body) => {
        const app = apps.get(foreground());
        if (app !== undefined && focused !== null)
          app.fields[focused] = `${app.fields[focused] ?? ''}${(body.value ?? []).join('')}`;
        return { value: null };
      },
    ],
    ['GET', /^\/session\/([^/]+)\/screenshot$/, () => ({ value: screenshotPng(shown()).toString('base64') })],
    [
      'POST',
      /^\/session\/([^/]+)\/wda\/touchAndHold$/,
      (body) => {
        number(body, 'x');
        number(body, 'y');
        number(body, 'duration');
        return { value: null };
      },
    ],
    [
      'POST',
      /^\/session\/([^/]+)\/wda\/pressButton$/,
      (body) => {
        const name = String(body.name ?? '').toLowerCase();
        if (!BUTTONS.includes(name))
          throw Object.assign(
            new Error(
              `The button '${body.name}' is unknown. Only the following button names are supported: ${BUTTONS.join(', ')}`,
            ),
            { status: 400, error: 'invalid argument' },
          );
        changeDevice(udid, (next) => {
          if (name === 'home') next.foreground = null;
          else next.volume = Math.max(0, Math.min(16, (next.volume ?? 8) + (name === 'volumeup' ? 1 : -1)));
        });
        return { value: null };
      },
    ],
    ['GET', /^(?:\/session\/([^/]+))?\/wda\/locked$/, () => ({ value: device().locked === true })],
    [
      'POST',
      /^(?:\/session\/([^/]+))?\/wda\/(lock|unlock)$/,
      (_body, _id, url) => {
        changeDevice(udid, (next) => {
          next.locked = url.pathname.endsWith('/lock');
        });
        return { value: null };
      },
    ],
    [
      'GET',
      /^(?:\/session\/([^/]+))?\/wda\/screen$/,
      () => {
        const landscape = orientation().includes('LANDSCAPE');
        return {
          value: {
            screenSize: { width: landscape ? HEIGHT : WIDTH, height: landscape ? WIDTH : HEIGHT },
            statusBarSize: { width: landscape ? HEIGHT : WIDTH, height: landscape ? 0 : 47 },
            scale: SCALE,
          },
        };
      },
    ],
    ['GET', /^\/session\/([^/]+)\/orientation$/, () => ({ value: orientation() })],
    [
      'POST',
      /^\/session\/([^/]+)\/orientation$/,
      (body) => {
        if (!ORIENTATIONS.includes(body.orientation))
          throw Object.assign(new Error(`Unable To Rotate Device`), { status: 400, error: 'invalid argument' });
        changeDevice(udid, (next) => {
          next.orientation = body.orientation;
        });
        return { value: null };
      },
    ],
    [
      'POST',
      /^\/session\/([^/]+)\/url$/,
      (body) => {
        if (typeof body.url !== 'string' || !/^[a-z][a-z0-9+.-]*:/i.test(body.url))
          throw Object.assign(new Error(`'${body.url}' is not a valid URL`), {
            status: 400,
            error: 'invalid argument',
          });
        if (/^https?:/i.test(body.url))
          changeDevice(udid, (next) => {
            next.foreground = SAFARI;
          });
        return { value: null };
      },
    ],
    [
      'POST',
      /^\/session\/([^/]+)\/wda\/apps\/activate$/,
      (body) => {
        if (!device().apps[body.bundleId])
          throw Object.assign(new Error(`${body.bundleId} is not installed`), { status: 500, error: 'unknown error' });
        if (foreground() !== body.bundleId || !apps.has(body.bundleId)) launch(body.bundleId);
        return { value: null };
      },
    ],
    [
      'DELETE',
      /^\/session\/([^/]+)$/,
      (_body, id) => {
        sessions.delete(id);
        return { value: null };
      },
    ],
  ];

  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url, 'http://wda');
      const send = (status, payload) => {
        response.writeHead(status, { 'content-type': 'application/json;charset=UTF-8' });
        response.end(JSON.stringify(payload));
      };
      const route = routes.find(([method, pattern]) => method === request.method && pattern.test(url.pathname));
      if (route === undefined)
        return send(404, {
          value: { error: 'unknown command', message: `Unhandled endpoint: ${url.pathname}` },
          sessionId: null,
        });
      const id = route[1].exec(url.pathname)[1];
      let body;
      try {
        body = chunks.length === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { value: { error: 'invalid argument', message: 'The body is not JSON' }, sessionId: null });
      }
      recordWdaRequest(request.method, url.pathname, body);
      if (id !== undefined && !sessions.has(id))
        return send(404, {
          value: { error: 'invalid session id', message: `Session does not exist: ${id}` },
          sessionId: id,
        });
      try {
        send(200, { sessionId: id ?? null, ...route[2](body, id, url) });
      } catch (error) {
        send(error.status ?? 500, {
          value: { error: error.error ?? 'unknown error', message: error.message },
          sessionId: id ?? null,
        });
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
