/**
 * Polling at scale (issue 21): 2,000 CI clients each reading their run's status
 * (`GET /api/v2/runs/{id}`) every 5 s, i.e. 400 requests a second spread evenly, against one
 * server; first as most clients poll (no validator), then as clients that keep the ETag
 * (`If-None-Match` → 304, docs/api.md#conditional-requests). Latency is measured per request from
 * here; the baseline is the bare server answering the same bytes at the same rate, in the same run.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type Child, startChild } from '../support/processes.ts';
import { type Figure, type Suite, percentile } from '../support/report.ts';

const SUPPORT = path.join(import.meta.dirname, '..', 'support');
const CLIENTS = 2000;
const EVERY_MS = 5000;

interface Polling {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly notModified: number;
  readonly errors: number;
  readonly requests: number;
}

/** Each client polls once per period at its own offset; one keep-alive connection per client. */
async function poll(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  conditional: boolean,
): Promise<Polling> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const latencies: number[] = [];
  let notModified = 0;
  let errors = 0;
  const etags = new Map<number, string>();
  const get = (client: number) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const etag = etags.get(client);
      const request = http.get(
        url,
        { agent, headers: { ...headers, ...(conditional && etag !== undefined && { 'if-none-match': etag }) } },
        (response) => {
          response.resume();
          response.on('end', () => {
            latencies.push(performance.now() - started);
            if (response.statusCode === 304) notModified += 1;
            else if (response.statusCode !== 200) errors += 1;
            const tag = response.headers.etag;
            if (typeof tag === 'string') etags.set(client, tag);
            resolve();
          });
        },
      );
      request.on('error', () => {
        errors += 1;
        resolve();
      });
    });
  const start = performance.now();
  const end = start + seconds * 1000;
  const inFlight: Promise<void>[] = [];
  // The clients' offsets are spread over the period; a timer fires every 5 ms for the clients due.
  const perTick = (CLIENTS * 5) / EVERY_MS;
  let sent = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now();
      if (now >= end) {
        clearInterval(timer);
        resolve();
        return;
      }
      const due = Math.floor(((now - start) / 5) * perTick);
      while (sent < due) {
        inFlight.push(get(sent % CLIENTS));
        sent += 1;
      }
    }, 5);
  });
  await Promise.all(inFlight);
  agent.destroy();
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    notModified,
    errors,
    requests: latencies.length,
  };
}

export const polling: Suite = async ({ quick, log }) => {
  const seconds = quick ? 10 : 30;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-polling-'));
  const children: Child[] = [];
  try {
    const ours = await startChild(path.join(SUPPORT, 'api-server.ts'), [path.join(dir, 'data')]);
    children.push(ours);
    const { url, apiKey, projectId } = ours.hello as { url: string; apiKey: string; projectId: number };
    const headers = {
      authorization: `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`,
      accept: 'application/json',
    };
    const runs = await (await fetch(`${url}/api/me/projects/${projectId}/runs?limit=1`, { headers })).json();
    const route = `/api/v2/runs/${(runs as { data: Array<{ id: number }> }).data[0]!.id}`;
    const answer = await fetch(`${url}${route}`, { headers });
    const body = await answer.text();
    fs.writeFileSync(
      path.join(dir, 'responses.json'),
      JSON.stringify([
        {
          path: route,
          json: { type: answer.headers.get('content-type'), body },
          xml: { type: 'application/xml', body },
        },
      ]),
    );
    const bare = await startChild(path.join(SUPPORT, 'bare-server.ts'), [path.join(dir, 'responses.json')]);
    children.push(bare);

    await poll(`${url}${route}`, headers, 2, false); // warm-up
    const baseline = await poll(`${bare.hello.url as string}${route}`, { accept: 'application/json' }, seconds, false);
    const plain = await poll(`${url}${route}`, headers, seconds, false);
    const conditional = await poll(`${url}${route}`, headers, seconds, true);
    const rate = CLIENTS / (EVERY_MS / 1000);
    for (const [name, figures] of [
      ['baseline', baseline],
      ['plain', plain],
      ['conditional', conditional],
    ] as const)
      log(
        `${name}: ${figures.requests} requests, p50 ${figures.p50Ms.toFixed(1)} ms, p99 ${figures.p99Ms.toFixed(1)} ms, ${figures.notModified} 304, ${figures.errors} errors`,
      );
    const label = `run status polled by ${CLIENTS} clients every ${EVERY_MS / 1000} s (${rate} req/s)`;
    return [
      {
        suite: 'polling',
        name: `${label}, p99`,
        value: plain.p99Ms,
        unit: 'ms',
        baseline: baseline.p99Ms,
        ratio: plain.p99Ms / Math.max(baseline.p99Ms, 0.1),
        goal: 'p99 < 50 ms',
        met: plain.p99Ms < 50 && plain.errors === 0,
      },
      {
        suite: 'polling',
        name: `${label} with If-None-Match, p99`,
        value: conditional.p99Ms,
        unit: 'ms',
        baseline: baseline.p99Ms,
        ratio: conditional.p99Ms / Math.max(baseline.p99Ms, 0.1),
        goal: 'p99 < 50 ms',
        met: conditional.p99Ms < 50 && conditional.errors === 0,
      },
      {
        suite: 'polling',
        name: `${label} with If-None-Match, share answered 304`,
        value: conditional.notModified / Math.max(conditional.requests, 1),
        unit: 'ratio',
      },
    ];
  } finally {
    for (const child of children) await child.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
};
