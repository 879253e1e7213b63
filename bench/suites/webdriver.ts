/**
 * What the WebDriver relay of Appium client side adds per command (docs/api.md#appium-client-side):
 * a real Appium 3 server with its fake driver (the same as test/integration/appium-real.test.ts),
 * once reached directly over HTTP and once through /wd/hub, as a user's tests reach it: the
 * client here, the server (the production role, `startServer`) in a process of its own, and the
 * agent holding the device in another, as on a device host. Both take the same commands,
 * interleaved, so that the machine's noise falls on both: finding an element, reading one of its
 * attributes. The added latency is the relayed command's time minus the direct one's, per pair. On
 * SQLite and on PostgreSQL (wake-ups through LISTEN/NOTIFY, as between servers in production). The
 * agent takes the commands over its WebSocket (docs/drivers.md#the-webdriver-socket); with
 * BENCH_WEBDRIVER_CHANNEL=0, over the HTTP long poll it falls back to.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startAppiumServer } from '../../src/agent/drivers/host/appium-server.ts';
import { APPIUM_BIN, APPIUM_ENV, FAKE_APP } from '../../test/support/appium-host.ts';
import { type Engine, postgresDatabase, postgresReachable } from '../support/context.ts';
import { type Child, cpuMsOf, startChild } from '../support/processes.ts';
import { type Figure, type Suite, percentile } from '../support/report.ts';

const WARM_UP = 20;
const SUPPORT = path.join(import.meta.dirname, '..', 'support');

export const webdriver: Suite = async ({ quick, log }) => {
  const engines: Engine[] = (await postgresReachable()) ? ['sqlite', 'postgres'] : ['sqlite'];
  if (engines.length === 1) log('PostgreSQL is not reachable: its WebDriver figures are SKIPPED');
  const figures: Figure[] = [];
  for (const engine of engines) {
    const rounds = quick ? 100 : 400;
    const { direct, relayed, added, cpuMs } = await measure(engine, rounds, log);
    const p50 = percentile(added, 50);
    log(
      `${engine}: ${added.length} commands, direct p50 ${percentile(direct, 50).toFixed(2)} ms, relayed p50 ${percentile(relayed, 50).toFixed(2)} ms, added p50 ${p50.toFixed(2)} ms, CPU ${cpuMs.toFixed(2)} ms a pair`,
    );
    figures.push(
      {
        suite: 'webdriver',
        name: `${engine}: added per command through /wd/hub (${added.length} commands), p50`,
        value: p50,
        unit: 'ms',
        goal: '< 2',
        met: p50 < 2,
      },
      { suite: 'webdriver', name: `  the same, p99`, value: percentile(added, 99), unit: 'ms' },
      // What the load moves far less than the latencies: this process's CPU (client, hub, agent) per
      // relayed command and its direct twin, the log's write behind it included.
      { suite: 'webdriver', name: `  CPU of client, hub and agent per pair of commands`, value: cpuMs, unit: 'ms' },
      {
        suite: 'webdriver',
        name: `  a command through /wd/hub, p50`,
        value: percentile(relayed, 50),
        unit: 'ms',
        baseline: percentile(direct, 50),
        ratio: percentile(relayed, 50) / percentile(direct, 50),
      },
      {
        suite: 'webdriver',
        name: `  a command through /wd/hub, p99`,
        value: percentile(relayed, 99),
        unit: 'ms',
        baseline: percentile(direct, 99),
        ratio: percentile(relayed, 99) / percentile(direct, 99),
      },
    );
  }
  return figures;
};

async function measure(engine: Engine, rounds: number, log: (message: string) => void) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-webdriver-'));
  const database = engine === 'postgres' ? await postgresDatabase() : undefined;
  const children: Child[] = [];
  const direct = await startAppiumServer({
    command: APPIUM_BIN,
    capabilities: {},
    logPath: path.join(dir, 'direct-appium.log'),
    env: APPIUM_ENV,
  });
  try {
    const server = await startChild(path.join(SUPPORT, 'webdriver-hub.ts'), [
      path.join(dir, 'server'),
      ...(database === undefined ? [] : [database.url]),
    ]);
    children.push(server);
    const { url, token, apiKey, appId } = server.hello as { url: string; token: string; apiKey: string; appId: number };
    const agent = await startChild(path.join(SUPPORT, 'webdriver-agent.ts'), [url, token, path.join(dir, 'agent')]);
    children.push(agent);
    const hub = `${url}/wd/hub`;
    const relayedSession = await session(hub, { platformName: 'Android', 'bitbar:options': { apiKey, app: appId } });
    const directSession = await session(direct.url, {
      platformName: 'Fake',
      'appium:automationName': 'Fake',
      'appium:app': FAKE_APP,
    });
    log(
      `${engine}: sessions started, ${rounds} rounds of 2 commands each way, the agent on ${process.env.BENCH_WEBDRIVER_CHANNEL === '0' ? 'HTTP long polls' : 'its WebSocket'}`,
    );
    const times = { direct: [] as number[], relayed: [] as number[], added: [] as number[] };
    // The client's CPU (this process) and the server's and the agent's, from /proc.
    const cpuNow = () => {
      const own = process.cpuUsage();
      return (own.user + own.system) / 1000 + cpuMsOf(server.process.pid!) + cpuMsOf(agent.process.pid!);
    };
    let cpu = cpuNow();
    for (let round = 0; round < WARM_UP + rounds; round++) {
      if (round === WARM_UP) cpu = cpuNow();
      for (const step of [findSubmit, readClicks]) {
        const directMs = await timed(() => step(directSession));
        const relayedMs = await timed(() => step(relayedSession));
        if (round < WARM_UP) continue;
        times.direct.push(directMs);
        times.relayed.push(relayedMs);
        times.added.push(relayedMs - directMs);
      }
    }
    const cpuMs = (cpuNow() - cpu) / times.added.length;
    await fetch(relayedSession.base, { method: 'DELETE' });
    await fetch(directSession.base, { method: 'DELETE' });
    return { ...times, cpuMs };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await direct.stop();
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Session {
  /** …/session/{id} */
  readonly base: string;
  element?: string;
}

async function session(url: string, capabilities: Record<string, unknown>): Promise<Session> {
  const answer = await call(`${url}/session`, 'POST', { capabilities: { alwaysMatch: capabilities } });
  return { base: `${url}/session/${(answer as { sessionId: string }).sessionId}` };
}

async function findSubmit(target: Session) {
  const found = (await call(`${target.base}/element`, 'POST', { using: 'accessibility id', value: 'submit' })) as {
    ELEMENT: string;
  };
  target.element = found.ELEMENT;
}

async function readClicks(target: Session) {
  await call(`${target.base}/element/${target.element}/attribute/clicks`, 'GET');
}

async function call(url: string, method: string, body?: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json()) as { value: unknown };
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(answer).slice(0, 300)}`);
  return answer.value;
}

async function timed(step: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await step();
  return performance.now() - started;
}
