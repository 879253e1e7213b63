/**
 * Live screens of interactive sessions (docs/api.md#interactive-sessions): a server on a port, a
 * real agent with a virtual Android device, one session whose screen changes as fast as input
 * changes it (a volume key every 100 ms: a new banner each time), watched by 1 and then 4 viewers
 * of `GET …/live`. Latency is from the agent taking a frame (X-Frame-Time) to a viewer reading its
 * last byte; the baseline is a bare request's round trip to the same server (`GET /api/v2/info`),
 * in the same run. Frames a second are per viewer.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import { createVirtualDriver, defaultVirtualDevices } from '../../src/agent/drivers/virtual/index.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { startInteractiveSession } from '../../src/services/interactive.ts';
import { openBenchContext } from '../support/context.ts';
import { type Figure, type Suite, percentile } from '../support/report.ts';
import { seedUser } from '../support/seed.ts';
import { testSandbox } from '../../test/support/sandbox.ts';

interface Watched {
  readonly latencies: number[];
  frames: number;
}

/** Reads a live stream until `signal` aborts, timing each frame's arrival against its X-Frame-Time. */
export function watch(url: string, auth: string, signal: AbortSignal): Promise<Watched> {
  const watched: Watched = { latencies: [], frames: 0 };
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { authorization: auth } }, (response) => {
      let buffer = Buffer.alloc(0);
      response.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        for (;;) {
          const head = buffer.indexOf('\r\n\r\n');
          if (head < 0) return;
          const headers = buffer.subarray(0, head).toString();
          const length = Number(/Content-Length: (\d+)/.exec(headers)?.[1]);
          const time = Number(/X-Frame-Time: (\d+)/.exec(headers)?.[1]);
          if (!Number.isFinite(length) || buffer.length < head + 4 + length) return;
          watched.frames += 1;
          watched.latencies.push(Date.now() - time);
          buffer = buffer.subarray(head + 4 + length);
        }
      });
      response.on('end', () => resolve(watched));
      response.on('error', () => resolve(watched));
    });
    request.on('error', (error) => (signal.aborted ? resolve(watched) : reject(error)));
    signal.addEventListener('abort', () => {
      request.destroy();
      resolve(watched);
    });
  });
}

/**
 * Changes the session's screen for `seconds`: a volume key (a new banner) 100 ms after the
 * previous one's answer. Answers how many inputs went and the seconds it took.
 */
export async function changeScreen(
  address: string,
  auth: string,
  id: number,
  seconds: number,
): Promise<{ inputs: number; elapsed: number }> {
  const started = Date.now();
  let inputs = 0;
  while (Date.now() - started < seconds * 1000) {
    const response = await fetch(`${address}/api/me/device-sessions/${id}/input`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ action: 'key', key: inputs % 2 === 0 ? 'volumeUp' : 'volumeDown' }),
    });
    if (response.status !== 200) throw new Error(`input: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    inputs += 1;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { inputs, elapsed: (Date.now() - started) / 1000 };
}

export const live: Suite = async ({ quick, log }) => {
  const bench = await openBenchContext('sqlite');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-live-'));
  let agent: RunningAgent | undefined;
  const figures: Figure[] = [];
  try {
    const address = await bench.app.listen({ port: 0, host: '127.0.0.1' });
    const { token } = await issueAgentToken(bench.ctx, 'bench-host');
    const driver = createVirtualDriver({
      dataDir: path.join(dataDir, 'virtual'),
      devices: defaultVirtualDevices(1, 0),
      sandbox: testSandbox(dataDir),
    });
    agent = startAgent({ serverUrls: [address], token, driver, dataDir, log: () => undefined });
    await agent.ready;
    const user = await seedUser(bench.ctx, 'live');
    const apiKey = user.apiKey;
    const auth = `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`;
    let device;
    for (let tries = 0; tries < 200 && device?.state !== 'IDLE'; tries++) {
      [device] = await bench.ctx.store.devices.ofAgent((await bench.ctx.store.agents.list())[0]!.id);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const session = await startInteractiveSession(bench.ctx, user, { deviceId: device!.id });
    const id = session.deviceRun.id;
    for (let tries = 0; tries < 200; tries++) {
      if ((await bench.ctx.store.deviceRuns.findById(id))?.state === 'RUNNING') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // The baseline: a bare request's round trip, here, now.
    const bare: number[] = [];
    for (let index = 0; index < 50; index++) {
      const started = performance.now();
      await (await fetch(`${address}/api/v2/info`)).arrayBuffer();
      bare.push(performance.now() - started);
    }
    const baseline = percentile(bare, 50);

    const seconds = quick ? 3 : 10;
    for (const viewers of [1, 4]) {
      const stop = new AbortController();
      const watching = Array.from({ length: viewers }, () =>
        watch(`${address}/api/me/device-sessions/${id}/live`, auth, stop.signal),
      );
      const { inputs, elapsed } = await changeScreen(address, auth, id, seconds);
      stop.abort();
      const results = await Promise.all(watching);
      const latencies = results.flatMap((result) => result.latencies);
      const fps = results.reduce((sum, result) => sum + result.frames, 0) / viewers / elapsed;
      log(`${viewers} viewer(s): ${inputs} inputs, ${latencies.length} frames seen`);
      figures.push(
        {
          suite: 'live',
          name: `frame latency, agent to viewer, p50 (${viewers} viewer${viewers === 1 ? '' : 's'})`,
          value: percentile(latencies, 50),
          unit: 'ms',
          baseline,
          ratio: percentile(latencies, 50) / baseline,
        },
        {
          suite: 'live',
          name: `frame latency, agent to viewer, p99 (${viewers} viewer${viewers === 1 ? '' : 's'})`,
          value: percentile(latencies, 99),
          unit: 'ms',
          baseline,
          ratio: percentile(latencies, 99) / baseline,
        },
        {
          suite: 'live',
          name: `frames a second per viewer, the screen changing ${(inputs / elapsed).toFixed(1)} times a second (${viewers} viewer${viewers === 1 ? '' : 's'})`,
          value: fps,
          unit: 'fps',
          baseline: inputs / elapsed,
          ratio: fps / (inputs / elapsed),
        },
      );
    }
  } finally {
    await agent?.stop();
    bench.app.server.closeAllConnections();
    await bench.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return figures;
};
