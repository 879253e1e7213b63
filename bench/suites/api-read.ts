/**
 * API read path: requests/s and p99 latency of the two reads CI polls most, JSON and XML, with
 * API-key auth, under concurrent load, against a bare Fastify server answering the same bytes
 * without auth or store. Both servers run as child processes; autocannon runs here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { type Child, rssOf, startChild, watchRss } from '../support/processes.ts';
import type { Figure, Suite } from '../support/report.ts';

const SUPPORT = path.join(import.meta.dirname, '..', 'support');
const CONNECTIONS = 10;

interface Load {
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly errors: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Load> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds });
  const errors = result.errors + result.timeouts + result.non2xx;
  return { requestsPerSecond: result.requests.average, p99Ms: result.latency.p99, errors };
}

export const apiRead: Suite = async ({ quick, log }) => {
  const seconds = quick ? 3 : 10;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-api-'));
  const children: Child[] = [];
  try {
    const ours = await startChild(path.join(SUPPORT, 'api-server.ts'), [path.join(dir, 'data')]);
    children.push(ours);
    const { url, apiKey, projectId } = ours.hello as { url: string; apiKey: string; projectId: number };
    const auth = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
    const paths = [`/api/me/projects/${projectId}/runs`, `/api/me/projects/${projectId}`];

    // The baseline answers exactly what ours answered.
    const recorded = [];
    for (const route of paths) {
      const answer = async (accept: string) => {
        const response = await fetch(`${url}${route}`, { headers: { authorization: auth, accept } });
        if (!response.ok) throw new Error(`${route}: ${response.status}`);
        return { type: response.headers.get('content-type') ?? '', body: await response.text() };
      };
      recorded.push({ path: route, json: await answer('application/json'), xml: await answer('application/xml') });
    }
    fs.writeFileSync(path.join(dir, 'responses.json'), JSON.stringify(recorded));
    const bare = await startChild(path.join(SUPPORT, 'bare-server.ts'), [path.join(dir, 'responses.json')]);
    children.push(bare);
    const bareUrl = bare.hello.url as string;

    const figures: Figure[] = [];
    const rss = watchRss(ours.process.pid!);
    for (const { path: route, json, xml } of recorded) {
      const label = route.endsWith('/runs') ? 'GET project runs (20)' : 'GET project';
      for (const [format, accept, goal, bytes] of [
        ['JSON', 'application/json', 0.5, json.body.length],
        ['XML', 'application/xml', 0.4, xml.body.length],
      ] as const) {
        await load(`${url}${route}`, { authorization: auth, accept }, 1); // warm-up
        await load(`${bareUrl}${route}`, { accept }, 1);
        const ourLoad = await load(`${url}${route}`, { authorization: auth, accept }, seconds);
        const baseLoad = await load(`${bareUrl}${route}`, { accept }, seconds);
        if (ourLoad.errors > 0 || baseLoad.errors > 0)
          log(`${label} ${format}: ${ourLoad.errors} errors (ours), ${baseLoad.errors} (baseline)`);
        const ratio = ourLoad.requestsPerSecond / baseLoad.requestsPerSecond;
        log(
          `${label} ${format} (${bytes} bytes): ${Math.round(ourLoad.requestsPerSecond)} req/s vs ${Math.round(baseLoad.requestsPerSecond)}, ratio ${ratio.toFixed(2)}`,
        );
        figures.push(
          {
            suite: 'api',
            name: `${label} ${format} throughput`,
            value: ourLoad.requestsPerSecond,
            unit: 'req/s',
            baseline: baseLoad.requestsPerSecond,
            ratio,
            goal: `ratio >= ${goal}`,
            met: ratio >= goal,
          },
          {
            suite: 'api',
            name: `${label} ${format} p99 latency`,
            value: ourLoad.p99Ms,
            unit: 'ms',
            baseline: baseLoad.p99Ms,
            ratio: ourLoad.p99Ms / Math.max(baseLoad.p99Ms, 1),
          },
        );
      }
    }
    const peak = rss.stop();
    figures.push({
      suite: 'memory',
      name: `server RSS under the API load (${CONNECTIONS} connections)`,
      value: peak / 1024 ** 2,
      unit: 'MiB',
      baseline: rssOf(bare.process.pid!) / 1024 ** 2,
    });
    return figures;
  } finally {
    for (const child of children) await child.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};
