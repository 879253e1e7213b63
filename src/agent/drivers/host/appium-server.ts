/**
 * One Appium server per device on the device host, for Appium client side sessions on real devices
 * (docs/api.md#appium-client-side; installing Appium and its drivers: docs/device-hosts.md). The
 * operator installs `appium` (3.x) and its drivers (UiAutomator2, XCUITest); the agent starts it
 * from PATH on a port it allocates, on the loopback only, waits for `/status`, relays the session's
 * commands to it unchanged, and stops it (its whole process group) when the session ends. Its log
 * is the session's `appium.log`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ExecutionContext, ExecutionResult, Job, WebDriverHandler } from '../../driver.ts';
import { keepAlive, requestText } from '../../http-text.ts';
import { startTimeOf } from './process-tree.ts';
import { sessionLogPath, sessionResult } from '../../webdriver-relay.ts';

export interface AppiumServer {
  readonly url: string;
  readonly pid: number;
  /** Relays a session's commands: the device's session id replaces the cloud's in every path. */
  readonly handle: WebDriverHandler;
  stop(): Promise<void>;
}

export interface AppiumOptions {
  /** The command (default `appium`, from PATH). */
  readonly command?: string;
  /** Capabilities the host decides: the device (`appium:udid`) and the app's local path (`appium:app`). */
  readonly capabilities: Readonly<Record<string, unknown>>;
  readonly logPath: string;
  /** How long the server may take to answer /status (default 60 s: drivers load slowly). */
  readonly startMs?: number;
  readonly env?: NodeJS.ProcessEnv;
}

export async function startAppiumServer(options: AppiumOptions): Promise<AppiumServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const log = fs.openSync(options.logPath, 'a');
  const child = spawn(
    options.command ?? 'appium',
    [
      'server',
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--base-path',
      '/',
      '--log-no-colors',
      '--log-timestamp',
    ],
    { stdio: ['ignore', log, log], detached: true, env: options.env ?? process.env },
  );
  fs.closeSync(log);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(error.message));
    child.once('exit', (code, signal) => resolve(`exited with ${signal ?? code}`));
  });
  try {
    await waitForStatus(url, options.startMs ?? 60_000, exited);
  } catch (error) {
    await stopProcess(child);
    throw error;
  }

  let deviceSession: string | null = null;
  const pool = keepAlive();
  const handle: WebDriverHandler = async (request) => {
    const { method, path } = request;
    let target = path;
    let payload: string | undefined;
    if (method === 'POST' && path === '/session') {
      const caps = (request.body as { capabilities?: { alwaysMatch?: Record<string, unknown> } } | undefined)
        ?.capabilities;
      payload = JSON.stringify({
        capabilities: {
          alwaysMatch: { ...caps?.alwaysMatch, ...options.capabilities },
          firstMatch: [{}],
        },
      });
    } else {
      if (deviceSession !== null) target = path.replace(/^\/session\/[^/]+/, `/session/${deviceSession}`);
      payload = request.text ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
    }
    const response = await requestText(pool, new URL(`${url}${target}`), {
      method,
      headers: payload === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
      body: payload,
    });
    const text = response.text === '' ? '{"value":null}' : response.text;
    if (method === 'POST' && path === '/session' && response.status === 200) {
      const answer = JSON.parse(text) as { sessionId?: string; value?: { sessionId?: string } };
      deviceSession = answer.value?.sessionId ?? answer.sessionId ?? null;
    }
    // Parsed only when the relay looks inside (a screenshot, the session's start): most answers pass as text.
    let body: unknown;
    return {
      status: response.status,
      text,
      get body() {
        return (body ??= JSON.parse(text));
      },
    };
  };
  const stop = async () => {
    pool.http.destroy();
    await stopProcess(child);
  };
  return { url, pid: child.pid!, handle, stop };
}

/** A real device's Appium client side session: an Appium server of its own for the session's length. */
export async function serveThroughAppium(
  job: Job,
  context: ExecutionContext,
  options: {
    command: string;
    capabilities: Readonly<Record<string, unknown>>;
    env?: NodeJS.ProcessEnv;
    /** Where the server's pid is kept while it runs: the device's cleaning stops one an agent crash left (stopLeftoverAppium). */
    pidFile: string;
  },
): Promise<ExecutionResult> {
  if (context.webdriver === undefined) throw new Error('an Appium client side run without its WebDriver channel');
  const logPath = path.join(job.workDir, 'appium.log');
  await stopLeftoverAppium(options.pidFile);
  const server = await startAppiumServer({ ...options, logPath });
  // Its own process group outlives an agent killed with SIGKILL; the start time tells it from a
  // later process that got the same pid.
  fs.writeFileSync(options.pidFile, `${server.pid} ${startTimeOf(server.pid) ?? 0}\n`);
  try {
    context.step('RUNNING');
    const end = await context.webdriver.serve(server.handle);
    const result = sessionResult(end, `session on ${job.serial}`, sessionLogPath(job.workDir));
    return { ...result, artifacts: [...result.artifacts, { kind: 'log', path: logPath, name: 'appium.log' }] };
  } finally {
    await server.stop();
    fs.rmSync(options.pidFile, { force: true });
  }
}

/**
 * Stops the Appium server an agent killed mid-session left running (its whole process group), if
 * its pid file names one still alive; a report for the cleaning's log, or null when there was none.
 */
export async function stopLeftoverAppium(pidFile: string): Promise<string | null> {
  let recorded: string;
  try {
    recorded = fs.readFileSync(pidFile, 'utf8');
  } catch {
    return null;
  }
  fs.rmSync(pidFile, { force: true });
  const [pid, startTime] = recorded.trim().split(' ').map(Number) as [number, number];
  if (!Number.isSafeInteger(pid) || pid <= 1 || startTimeOf(pid) !== startTime) return null;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    return null;
  }
  for (let attempt = 0; attempt < 100 && startTimeOf(pid) === startTime; attempt++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return `stopped the Appium server (pid ${pid}) an earlier agent left running`;
}

async function waitForStatus(url: string, timeoutMs: number, exited: Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone: string | null = null;
  void exited.then((why) => (gone = why));
  for (;;) {
    if (gone !== null) throw new Error(`the Appium server ${gone} before it answered (see appium.log)`);
    try {
      const response = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the Appium server did not answer /status within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** SIGTERM to its process group (Appium's drivers run children), SIGKILL after 5 s. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
