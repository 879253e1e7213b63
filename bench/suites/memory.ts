/**
 * Memory: the agent's RSS per idle virtual device (agents of 10 and 100 devices as processes),
 * and the server's RSS while a large file is uploaded (it must not grow with the file's size:
 * uploads stream to the blob store). Server RSS under API load is measured by the api suite.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '../../src/client/api-client.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server/start.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { type Child, rssOf, startChild, watchRss } from '../support/processes.ts';
import type { Figure, Suite } from '../support/report.ts';

const BIN = path.join(import.meta.dirname, '..', '..', 'bin', 'devicecloud.js');
const SUPPORT = path.join(import.meta.dirname, '..', 'support');
const MiB = 1024 ** 2;

/** An agent process with `devices` virtual devices, idle once all are clean; its RSS then. */
async function idleAgentRss(serverUrl: string, token: string, devices: number, dir: string): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'agent',
      '--server',
      serverUrl,
      '--devices',
      String(devices),
      '--serial-prefix',
      `mem${devices}`,
      '--data-dir',
      path.join(dir, `agent-${devices}`),
    ],
    {
      env: { ...process.env, DEVICECLOUD_AGENT_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  try {
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if ((output.match(/ is clean: /g) ?? []).length >= devices) resolve();
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', read);
      child.once('exit', (code) => reject(new Error(`agent exited (${code}): ${output.slice(-2000)}`)));
    });
    await new Promise((resolve) => setTimeout(resolve, 1000)); // settle, then let the GC have its say
    return rssOf(child.pid!);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

/** Uploads a sparse file of `bytes` to the server child; returns its RSS growth during the upload. */
async function uploadGrowth(server: Child, bytes: number, dir: string): Promise<{ growth: number; seconds: number }> {
  const { url, apiKey } = server.hello as { url: string; apiKey: string };
  const file = path.join(dir, `upload-${bytes}.bin`);
  fs.closeSync(fs.openSync(file, 'w'));
  fs.truncateSync(file, bytes); // reads as zeros without taking the disk
  const before = rssOf(server.process.pid!);
  const rss = watchRss(server.process.pid!, 50);
  const started = performance.now();
  const uploaded = await createClient({ url, apiKey }).upload(file);
  const seconds = (performance.now() - started) / 1000;
  const peak = rss.stop();
  fs.rmSync(file);
  if (uploaded.size !== bytes) throw new Error(`uploaded ${uploaded.size} of ${bytes} bytes`);
  return { growth: peak - before, seconds };
}

export const memory: Suite = async ({ quick, log }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-bench-memory-'));
  const figures: Figure[] = [];
  try {
    const server = await startServer(
      loadConfig({
        flags: { dataDir: path.join(dir, 'server'), port: '0', rateLimitPerUser: '0' },
        defaults: { logLevel: 'warn' },
      }),
    );
    try {
      const small = await idleAgentRss(server.localUrl, (await issueAgentToken(server.ctx, 'mem-10')).token, 10, dir);
      const large = await idleAgentRss(server.localUrl, (await issueAgentToken(server.ctx, 'mem-100')).token, 100, dir);
      const perDevice = (large - small) / 90;
      log(`agent RSS idle: ${(small / MiB).toFixed(1)} MiB with 10 devices, ${(large / MiB).toFixed(1)} MiB with 100`);
      figures.push(
        { suite: 'memory', name: 'agent RSS, idle, 10 virtual devices', value: small / MiB, unit: 'MiB' },
        {
          suite: 'memory',
          name: 'agent RSS, idle, 100 virtual devices',
          value: large / MiB,
          unit: 'MiB',
          baseline: small / MiB,
          ratio: large / small,
        },
        {
          suite: 'memory',
          name: 'agent RSS per idle device (100 vs 10; below ±10 MiB of RSS noise is not measurable)',
          value: perDevice / 1024,
          unit: 'KiB',
        },
      );
    } finally {
      await server.close();
    }

    const uploader = await startChild(path.join(SUPPORT, 'api-server.ts'), [path.join(dir, 'upload-server')]);
    try {
      const smallSize = 64 * MiB;
      const largeSize = quick ? 256 * MiB : 1024 * MiB;
      const smallUpload = await uploadGrowth(uploader, smallSize, dir);
      const largeUpload = await uploadGrowth(uploader, largeSize, dir);
      log(
        `upload: server RSS grew ${(smallUpload.growth / MiB).toFixed(1)} MiB for 64 MiB, ${(largeUpload.growth / MiB).toFixed(1)} MiB for ${largeSize / MiB} MiB (${largeUpload.seconds.toFixed(1)} s)`,
      );
      const ratio = Math.max(largeUpload.growth, MiB) / Math.max(smallUpload.growth, MiB);
      figures.push(
        {
          suite: 'memory',
          name: `server RSS growth uploading ${largeSize / MiB} MiB`,
          value: largeUpload.growth / MiB,
          unit: 'MiB',
          baseline: smallUpload.growth / MiB,
          ratio,
          goal: 'flat (ratio < 2 for 4-16x the bytes)',
          met: ratio < 2,
        },
        {
          suite: 'memory',
          name: `upload of ${largeSize / MiB} MiB`,
          value: largeSize / MiB / largeUpload.seconds,
          unit: 'MiB/s',
        },
      );
    } finally {
      await uploader.stop();
    }
    return figures;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};
