/**
 * What the WebDriver relay of Appium client side adds per command (docs/api.md#appium-client-side):
 * a real Appium 3 server with its fake driver (the same as test/integration/appium-real.test.ts),
 * once reached directly over HTTP and once through /wd/hub of a server in this process and an
 * agent (in this process too) holding the device. Both take the same commands, interleaved, so
 * that the machine's noise falls on both: finding an element, reading one of its attributes. The
 * added latency is the relayed command's time minus the direct one's, per pair. On SQLite and on
 * PostgreSQL (wake-ups through LISTEN/NOTIFY, as between servers in production).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startAgent } from '../../src/agent/agent.ts';
import { startAppiumServer } from '../../src/agent/drivers/host/appium-server.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { APPIUM_BIN, APPIUM_ENV, FAKE_APP, appiumHostDriver } from '../../test/support/appium-host.ts';
import * as fixtures from '../../test/support/fixtures.ts';
import { type Engine, openBenchContext, postgresReachable } from '../support/context.ts';
import { type Figure, type Suite, percentile } from '../support/report.ts';
import { seedUser } from '../support/seed.ts';

const WARM_UP = 20;

export const webdriver: Suite = async ({ quick, log }) => {
  const engines: Engine[] = (await postgresReachable()) ? ['sqlite', 'postgres'] : ['sqlite'];
  if (engines.length === 1) log('PostgreSQL is not reachable: its WebDriver figures are SKIPPED');
  const figures: Figure[] = [];
  for (const engine of engines) {
    const rounds = quick ? 100 : 400;
    const { direct, relayed, added } = await measure(engine, rounds, log);
    const p50 = percentile(added, 50);
    log(
      `${engine}: ${added.length} commands, direct p50 ${percentile(direct, 50).toFixed(2)} ms, relayed p50 ${percentile(relayed, 50).toFixed(2)} ms, added p50 ${p50.toFixed(2)} ms`,
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
  const bench = await openBenchContext(engine, { listenNotify: true });
  const hub = `${await bench.app.listen({ port: 0, host: '127.0.0.1' })}/wd/hub`;
  const { token } = await issueAgentToken(bench.ctx, 'bench-appium');
  const agent = startAgent({
    serverUrls: [new URL(hub).origin],
    token,
    driver: appiumHostDriver(dir),
    dataDir: dir,
    log: () => undefined,
  });
  const direct = await startAppiumServer({
    command: APPIUM_BIN,
    capabilities: {},
    logPath: path.join(dir, 'direct-appium.log'),
    env: APPIUM_ENV,
  });
  try {
    await agent.ready;
    const user = await seedUser(bench.ctx, `webdriver-${engine}`);
    const app = await fixtures.file(bench.ctx, user, { name: 'app.apk', inputType: 'APPLICATION', osType: 'ANDROID' });
    const relayedSession = await session(hub, {
      platformName: 'Android',
      'bitbar:options': { apiKey: user.apiKey, app: app.id },
    });
    const directSession = await session(direct.url, {
      platformName: 'Fake',
      'appium:automationName': 'Fake',
      'appium:app': FAKE_APP,
    });
    log(`${engine}: sessions started, ${rounds} rounds of 2 commands each way`);
    const times = { direct: [] as number[], relayed: [] as number[], added: [] as number[] };
    for (let round = 0; round < WARM_UP + rounds; round++) {
      for (const step of [findSubmit, readClicks]) {
        const directMs = await timed(() => step(directSession));
        const relayedMs = await timed(() => step(relayedSession));
        if (round < WARM_UP) continue;
        times.direct.push(directMs);
        times.relayed.push(relayedMs);
        times.added.push(relayedMs - directMs);
      }
    }
    await fetch(relayedSession.base, { method: 'DELETE' });
    await fetch(directSession.base, { method: 'DELETE' });
    return times;
  } finally {
    await agent.stop();
    await direct.stop();
    bench.app.server.closeAllConnections();
    await bench.close();
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
