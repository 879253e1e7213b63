/**
 * API read path: requests/s and p99 latency of the two reads CI polls most, JSON and XML, with
 * API-key auth, under concurrent load, on SQLite and on PostgreSQL, against two baselines: the
 * same reads written by hand (Fastify and the same SQL, no framework of ours: what is left is our
 * own overhead) and a bare Fastify server answering the same bytes without auth or store. The
 * servers run as child processes; autocannon runs here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { type Child, cpuMsOf, rssOf, startChild, watchRss } from '../support/processes.ts';
import { postgresDatabase, postgresReachable } from '../support/context.ts';
import type { Figure, Suite } from '../support/report.ts';

const SUPPORT = path.join(import.meta.dirname, '..', 'support');
const CONNECTIONS = 10;
/** Ours against the hand-written reads (issue 21). */
const GOAL = 0.7;

interface Load {
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly requests: number;
  /** CPU time the server used meanwhile. */
  readonly cpuMs: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number, pid: number): Promise<Load> {
  const cpuBefore = cpuMsOf(pid);
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds });
  const errors = result.errors + result.timeouts + result.non2xx;
  return {
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    errors,
    requests: result.requests.total,
    cpuMs: cpuMsOf(pid) - cpuBefore,
  };
}

export const apiRead: Suite = async ({ quick, log }) => {
  const figures: Figure[] = [];
  figures.push(...(await engineRun('SQLite', undefined, quick, log)));
  if (await postgresReachable()) {
    const database = await postgresDatabase();
    try {
      figures.push(...(await engineRun('PostgreSQL', database.url, quick, log)));
    } finally {
      await database.drop();
    }
  } else log('PostgreSQL does not answer at DEVICECLOUD_TEST_DATABASE_URL: its half is skipped');
  return figures;
};

async function engineRun(
  engine: 'SQLite' | 'PostgreSQL',
  databaseUrl: string | undefined,
  quick: boolean,
  log: (message: string) => void,
): Promise<Figure[]> {
  const seconds = quick ? 3 : 10;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-api-'));
  const children: Child[] = [];
  try {
    const ours = await startChild(path.join(SUPPORT, 'api-server.ts'), [
      path.join(dir, 'data'),
      ...(databaseUrl === undefined ? [] : [databaseUrl]),
    ]);
    children.push(ours);
    const { url, apiKey, projectId, database } = ours.hello as {
      url: string;
      apiKey: string;
      projectId: number;
      database: string;
    };
    const auth = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
    const paths = [`/api/me/projects/${projectId}/runs`, `/api/me/projects/${projectId}`];
    const hand = await startChild(path.join(SUPPORT, 'handwritten-server.ts'), [
      databaseUrl === undefined ? 'sqlite' : 'postgres',
      database,
    ]);
    children.push(hand);
    const handUrl = hand.hello.url as string;

    // The bare baseline answers exactly what ours answered; the hand-written one about as much.
    const recorded = [];
    for (const route of paths) {
      const answer = async (base: string, accept: string) => {
        const response = await fetch(`${base}${route}`, { headers: { authorization: auth, accept } });
        if (!response.ok) throw new Error(`${base}${route}: ${response.status}`);
        return { type: response.headers.get('content-type') ?? '', body: await response.text() };
      };
      recorded.push({
        path: route,
        json: await answer(url, 'application/json'),
        xml: await answer(url, 'application/xml'),
        handBytes: {
          JSON: (await answer(handUrl, 'application/json')).body.length,
          XML: (await answer(handUrl, 'application/xml')).body.length,
        },
      });
    }
    fs.writeFileSync(path.join(dir, 'responses.json'), JSON.stringify(recorded));
    const bare = await startChild(path.join(SUPPORT, 'bare-server.ts'), [path.join(dir, 'responses.json')]);
    children.push(bare);
    const bareUrl = bare.hello.url as string;

    const figures: Figure[] = [];
    const rss = watchRss(ours.process.pid!);
    // Every path in both formats once before any is measured: measured first, the JSON answers
    // otherwise paid for code still being optimised (in process, the first 4,000 requests of a
    // read cost up to twice what later ones do).
    for (const { path: route } of recorded)
      for (const accept of ['application/json', 'application/xml'])
        for (const [base, child] of [
          [url, ours],
          [handUrl, hand],
          [bareUrl, bare],
        ] as const)
          await load(`${base}${route}`, { authorization: auth, accept }, 1, child.process.pid!);
    for (const { path: route, json, xml, handBytes } of recorded) {
      const label = `${engine} ${route.endsWith('/runs') ? 'GET project runs (20)' : 'GET project'}`;
      for (const [format, accept, bytes] of [
        ['JSON', 'application/json', json.body.length],
        ['XML', 'application/xml', xml.body.length],
      ] as const) {
        const headers = { authorization: auth, accept };
        // Alternating halves, so that a change in the machine's load falls on both sides.
        const measured = { ours: [] as Load[], hand: [] as Load[], bare: [] as Load[] };
        const servers = [
          [measured.ours, `${url}${route}`, ours.process.pid!],
          [measured.hand, `${handUrl}${route}`, hand.process.pid!],
          [measured.bare, `${bareUrl}${route}`, bare.process.pid!],
        ] as const;
        for (const [, target, pid] of servers) await load(target, headers, 1, pid); // warm-up
        for (let half = 0; half < 2; half++)
          for (const [into, target, pid] of servers) into.push(await load(target, headers, seconds / 2, pid));
        const [ourLoad, handLoad, bareLoad] = [measured.ours, measured.hand, measured.bare].map(merge) as [
          Load,
          Load,
          Load,
        ];
        if (ourLoad.errors + handLoad.errors + bareLoad.errors > 0)
          log(
            `${label} ${format}: errors ${ourLoad.errors} (ours), ${handLoad.errors} (by hand), ${bareLoad.errors} (bare)`,
          );
        const ratio = ourLoad.requestsPerSecond / handLoad.requestsPerSecond;
        const bareRatio = ourLoad.requestsPerSecond / bareLoad.requestsPerSecond;
        // CPU per request, as a ratio like the throughput's (by hand / ours: above 1 is cheaper).
        const [ourCpu, handCpu] = [ourLoad, handLoad].map((one) => (one.cpuMs * 1000) / one.requests) as [
          number,
          number,
        ];
        log(
          `${label} ${format} (${bytes} bytes; by hand ${handBytes[format]}): ${Math.round(ourLoad.requestsPerSecond)} req/s, by hand ${Math.round(handLoad.requestsPerSecond)} (ratio ${ratio.toFixed(2)}), bare ${Math.round(bareLoad.requestsPerSecond)} (ratio ${bareRatio.toFixed(2)}); CPU per request ${Math.round(ourCpu)} µs, by hand ${Math.round(handCpu)} µs (ratio ${(handCpu / ourCpu).toFixed(2)})`,
        );
        figures.push(
          {
            suite: 'api',
            name: `${label} ${format} throughput / by hand`,
            value: ourLoad.requestsPerSecond,
            unit: 'req/s',
            baseline: handLoad.requestsPerSecond,
            ratio,
            goal: `ratio >= ${GOAL}`,
            met: ratio >= GOAL,
          },
          {
            suite: 'api',
            name: `${label} ${format} throughput / bare`,
            value: ourLoad.requestsPerSecond,
            unit: 'req/s',
            baseline: bareLoad.requestsPerSecond,
            ratio: bareRatio,
          },
          {
            suite: 'api',
            name: `${label} ${format} server CPU per request / by hand`,
            value: ourCpu,
            unit: 'µs',
            baseline: handCpu,
            ratio: handCpu / ourCpu,
            goal: `ratio >= ${GOAL}`,
            met: handCpu / ourCpu >= GOAL,
          },
          {
            suite: 'api',
            name: `${label} ${format} p99 latency / by hand`,
            value: ourLoad.p99Ms,
            unit: 'ms',
            baseline: handLoad.p99Ms,
            ratio: ourLoad.p99Ms / Math.max(handLoad.p99Ms, 1),
          },
        );
      }
    }
    const peak = rss.stop();
    figures.push({
      suite: 'memory',
      name: `server RSS under the API load (${engine}, ${CONNECTIONS} connections)`,
      value: peak / 1024 ** 2,
      unit: 'MiB',
      baseline: rssOf(bare.process.pid!) / 1024 ** 2,
    });
    return figures;
  } finally {
    for (const child of children) await child.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function merge(loads: readonly Load[]): Load {
  return {
    requestsPerSecond: loads.reduce((sum, one) => sum + one.requestsPerSecond, 0) / loads.length,
    p99Ms: Math.max(...loads.map((one) => one.p99Ms)),
    errors: loads.reduce((sum, one) => sum + one.errors, 0),
    requests: loads.reduce((sum, one) => sum + one.requests, 0),
    cpuMs: loads.reduce((sum, one) => sum + one.cpuMs, 0),
  };
}
