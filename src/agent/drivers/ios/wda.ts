/**
 * The crawler's hands and eyes: WebDriverAgent (WDA), the XCUITest runner app that serves the
 * device's UI over HTTP (port 8100 on the device). go-ios starts it (`ios runwda`, the runner must
 * be installed: docs/device-hosts.md#ios) and forwards a local port to it (`ios forward`); this
 * module then speaks WDA's HTTP API: a session for the app, the accessibility tree, W3C pointer
 * actions for taps, keys, screenshots, the app in front. `UiAutomation` is the seam the crawler
 * uses, so that it can be driven by something else (tests use a fake WDA behind the fake go-ios).
 */
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type GoIos, udidArg } from './go-ios.ts';
import type { LogLine } from './go-ios-output.ts';
import { type UiNode, parseUiTree } from './ui-tree.ts';

export interface UiSession {
  /** The accessibility tree of the app in front. */
  source(): Promise<UiNode>;
  /** The bundle id of the app in front (com.apple.springboard when the app has gone). */
  foregroundApp(): Promise<string>;
  tap(x: number, y: number): Promise<void>;
  /** Types into the focused field. */
  type(text: string): Promise<void>;
  screenshot(file: string): Promise<void>;
  /** Brings the app back to the front, launching it if it is not running. */
  activate(bundleId: string): Promise<void>;
  close(): Promise<void>;
}

export interface UiAutomation {
  /** Launches the app and answers a session on it. */
  open(udid: string, bundleId: string, signal: AbortSignal): Promise<UiSession>;
}

const WDA_DEVICE_PORT = 8100;
const REQUEST_TIMEOUT_MS = 60_000;

export class WdaError extends Error {}

export interface Point {
  readonly x: number;
  readonly y: number;
}

/** A client of one WDA session over HTTP. */
export class WdaClient {
  constructor(
    readonly baseUrl: string,
    private readonly signal: AbortSignal,
  ) {}

  private async request(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}${route}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      // The rule cannot see that GETs never carry one: body is undefined for them.
      // oxlint-disable-next-line unicorn/no-invalid-fetch-options
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.any([this.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
    const text = await response.text();
    let parsed: { value?: unknown; sessionId?: unknown } = {};
    try {
      parsed = text === '' ? {} : (JSON.parse(text) as typeof parsed);
    } catch {
      throw new WdaError(
        `WebDriverAgent answered ${method} ${route} with something that is not JSON (HTTP ${response.status})`,
      );
    }
    const value = parsed.value as { error?: unknown; message?: unknown } | undefined;
    if (!response.ok || (value !== null && typeof value === 'object' && typeof value.error === 'string')) {
      throw new WdaError(
        `WebDriverAgent refused ${method} ${route}: ${String(value?.message ?? value?.error ?? `HTTP ${response.status}`)}`,
      );
    }
    return parsed;
  }

  async ready(): Promise<boolean> {
    try {
      const answer = (await this.request('GET', '/status')) as { value?: { ready?: unknown } };
      return answer.value?.ready !== false;
    } catch (error) {
      if (this.signal.aborted) throw error;
      return false;
    }
  }

  /** A session on the app (launched for it), or, without one, on whatever the device shows. */
  async createSession(bundleId?: string): Promise<string> {
    const answer = (await this.request('POST', '/session', {
      capabilities: { alwaysMatch: bundleId === undefined ? {} : { bundleId, shouldWaitForQuiescence: true } },
    })) as {
      sessionId?: unknown;
      value?: { sessionId?: unknown };
    };
    const id = answer.value?.sessionId ?? answer.sessionId;
    if (typeof id !== 'string') throw new WdaError('WebDriverAgent created no session');
    return id;
  }

  async source(session: string): Promise<UiNode> {
    const answer = (await this.request('GET', `/session/${session}/source?format=json`)) as { value?: unknown };
    return parseUiTree(answer.value);
  }

  async activeApp(session: string): Promise<string> {
    const answer = (await this.request('GET', `/session/${session}/wda/activeAppInfo`)) as {
      value?: { bundleId?: unknown };
    };
    return String(answer.value?.bundleId ?? '');
  }

  async tap(session: string, x: number, y: number): Promise<void> {
    await this.finger(session, [
      { type: 'pointerMove', duration: 0, x, y },
      { type: 'pointerDown', button: 0 },
      { type: 'pause', duration: 80 },
      { type: 'pointerUp', button: 0 },
    ]);
  }

  /** A finger moved from one point to the other in `ms`, as a person swipes. */
  async swipe(session: string, from: Point, to: Point, ms: number): Promise<void> {
    await this.finger(session, [
      { type: 'pointerMove', duration: 0, x: from.x, y: from.y },
      { type: 'pointerDown', button: 0 },
      { type: 'pointerMove', duration: ms, x: to.x, y: to.y },
      { type: 'pointerUp', button: 0 },
    ]);
  }

  /**
   * W3C pointer actions of one finger: understood by every WDA since 2019, unlike its changing
   * tap routes (`/wda/tap/:uuid` became `/wda/tap`), and a swipe's duration is its movement's,
   * where `/wda/dragfromtoforduration` holds the finger that long before it moves.
   */
  private async finger(session: string, actions: readonly Record<string, unknown>[]): Promise<void> {
    await this.request('POST', `/session/${session}/actions`, {
      actions: [{ type: 'pointer', id: 'finger1', parameters: { pointerType: 'touch' }, actions }],
    });
  }

  /** Pressed for `seconds` at a point (in points, as WDA's coordinates are). */
  async touchAndHold(session: string, x: number, y: number, seconds: number): Promise<void> {
    await this.request('POST', `/session/${session}/wda/touchAndHold`, { x, y, duration: seconds });
  }

  /** A hardware button: home, volumeup or volumedown (the volume ones on real devices only). */
  async pressButton(session: string, name: 'home' | 'volumeup' | 'volumedown'): Promise<void> {
    await this.request('POST', `/session/${session}/wda/pressButton`, { name });
  }

  async locked(): Promise<boolean> {
    const answer = (await this.request('GET', '/wda/locked')) as { value?: unknown };
    return answer.value === true;
  }

  /** The side button: locks the screen, or wakes and unlocks it (a device without a passcode). */
  async lock(lock: boolean): Promise<void> {
    await this.request('POST', lock ? '/wda/lock' : '/wda/unlock');
  }

  async orientation(session: string, orientation: 'PORTRAIT' | 'LANDSCAPE'): Promise<void> {
    await this.request('POST', `/session/${session}/orientation`, { orientation });
  }

  /** Opens the URL as the system does (Safari for web addresses). */
  async openUrl(session: string, url: string): Promise<void> {
    await this.request('POST', `/session/${session}/url`, { url });
  }

  /** The screen in points as it is turned now, and how many pixels a point is. */
  async screen(): Promise<{ width: number; height: number; scale: number }> {
    const answer = (await this.request('GET', '/wda/screen')) as {
      value?: { screenSize?: { width?: unknown; height?: unknown }; scale?: unknown };
    };
    const { width, height } = answer.value?.screenSize ?? {};
    const scale = answer.value?.scale;
    if (typeof width !== 'number' || typeof height !== 'number' || typeof scale !== 'number' || scale <= 0)
      throw new WdaError('WebDriverAgent did not say the size of the screen');
    return { width, height, scale };
  }

  async keys(session: string, text: string): Promise<void> {
    await this.request('POST', `/session/${session}/wda/keys`, { value: [...text] });
  }

  async screenshot(session: string): Promise<Buffer> {
    const answer = (await this.request('GET', `/session/${session}/screenshot`)) as { value?: unknown };
    if (typeof answer.value !== 'string') throw new WdaError('WebDriverAgent returned no screenshot');
    return Buffer.from(answer.value, 'base64');
  }

  async activate(session: string, bundleId: string): Promise<void> {
    await this.request('POST', `/session/${session}/wda/apps/activate`, { bundleId });
  }

  async deleteSession(session: string): Promise<void> {
    await this.request('DELETE', `/session/${session}`);
  }
}

/** WebDriverAgent running on a device, with a local port forwarded to it. */
export interface RunningWda {
  readonly client: WdaClient;
  stop(): Promise<void>;
}

/** Starts WDA through go-ios and waits until it answers (up to `readyTimeoutMs`). */
export async function startWda(
  goIos: GoIos,
  udid: string,
  signal: AbortSignal,
  readyTimeoutMs = 90_000,
): Promise<RunningWda> {
  const port = await freePort();
  const said: LogLine[] = [];
  const runner = goIos.start(['runwda', udidArg(udid)], { signal, onLogLine: (line) => said.push(line) });
  const forward = goIos.start(['forward', String(port), String(WDA_DEVICE_PORT), udidArg(udid)], { signal });
  let runnerGone = false;
  void runner.exited.then(() => (runnerGone = true));
  const stop = async () => {
    await Promise.all([runner.stop(), forward.stop()]);
  };
  const client = new WdaClient(`http://127.0.0.1:${port}`, signal);
  try {
    const deadline = Date.now() + readyTimeoutMs;
    while (!(await client.ready())) {
      if (runnerGone) throw new WdaError(`go-ios could not start WebDriverAgent: ${lastError(said)}`);
      if (Date.now() > deadline)
        throw new WdaError(
          `WebDriverAgent did not answer within ${Math.round(readyTimeoutMs / 1000)} s: ${lastError(said)}`,
        );
      await sleep(500, undefined, { signal });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { client, stop };
}

/** WDA started through go-ios for each session; it takes up to `readyTimeoutMs` to answer. */
export function wdaAutomation(goIos: GoIos, options: { readyTimeoutMs?: number } = {}): UiAutomation {
  return {
    async open(udid, bundleId, signal) {
      const { client, stop } = await startWda(goIos, udid, signal, options.readyTimeoutMs);
      let session: string;
      try {
        session = await client.createSession(bundleId);
      } catch (error) {
        await stop();
        throw error;
      }
      return {
        source: () => client.source(session),
        foregroundApp: () => client.activeApp(session),
        tap: (x, y) => client.tap(session, x, y),
        type: (text) => client.keys(session, text),
        screenshot: async (file) => fs.writeFileSync(file, await client.screenshot(session)),
        activate: (id) => client.activate(session, id),
        async close() {
          await client.deleteSession(session).catch(() => undefined);
          await stop();
        },
      };
    },
  };
}

function lastError(lines: readonly LogLine[]): string {
  const last = lines.findLast((line) => line.level === 'ERROR') ?? lines.findLast((line) => line.level !== 'WARN');
  if (last === undefined) return 'it said nothing (is WebDriverAgent installed on the device?)';
  const cause = last.attrs.error ?? last.attrs.err;
  return cause === undefined ? last.msg : `${last.msg}: ${String(cause)}`;
}

/** A local port nobody listens on now (the forward takes it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
