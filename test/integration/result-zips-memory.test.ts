/**
 * Zips are streamed, never built in memory (docs/api.md#result-zips): a 200 MB artifact is zipped
 * twice, once straight to an HTTP client over a real socket (a session's output file set) and once
 * into the blob store (a run's files.zip), while the process's memory is sampled; neither may grow
 * by anything near the artifact's size. The bytes that come out are checked against those that
 * went in. One engine is enough: the database holds only the records.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fixtures from '../support/fixtures.ts';
import { measuring } from '../support/memory.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const MIB = 1024 * 1024;
const ARTIFACT_MIB = 200;
/** Well under the artifact: what streaming costs (buffers of the zip writer, the socket, the blob store). */
const MAX_GROWTH_MIB = 64;

describe('result zips keep memory flat (sqlite)', () => {
  let h: Harness;
  let alice: TestUser;
  let base: string;
  let runId: number;
  let sessionId: number;
  let artifactSha: string;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-zip-memory-'));

  beforeAll(async () => {
    h = await createHarness('sqlite');
    alice = await h.user({ plan: 'PLATINUM' });
    const projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Big' } })).body.id;
    const device = await fixtures.device(h.ctx, 'Big device');
    const run = await fixtures.run(h.ctx, alice.user, projectId, [device], ['SUCCEEDED']);
    runId = run.id;
    sessionId = (await h.ctx.store.deviceRuns.currentOfRun(run.id))[0]!.id;
    // Random bytes (nothing to compress) produced a chunk at a time: never 200 MB in memory here either.
    const hash = createHash('sha256');
    let produced = 0;
    const source = new Readable({
      read() {
        if (produced === ARTIFACT_MIB) return this.push(null);
        produced += 1;
        const chunk = randomBytes(MIB);
        hash.update(chunk);
        this.push(chunk);
      },
    });
    const blob = await h.ctx.blobs.put(source, { maxBytes: Number.POSITIVE_INFINITY });
    artifactSha = hash.digest('hex');
    await h.ctx.store.files.insert({
      userId: alice.user.id,
      projectId,
      deviceRunId: sessionId,
      name: 'screen-recording.mp4',
      size: blob.size,
      mimetype: 'video/mp4',
      sha256: blob.sha256,
      blobKey: blob.key,
      state: 'READY',
      direction: 'OUTPUT',
      inputType: null,
      osType: null,
      duplicate: false,
      properties: {},
      tags: ['video'],
      createTime: h.ctx.clock(),
    });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await h?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('streams a session zip of a 200 MB artifact to a client with flat memory', async () => {
    const target = path.join(tmp, 'session.zip');
    const growth = await measuring(async () => {
      await new Promise<void>((resolve, reject) => {
        const request = http.get(
          `${base}/api/v2/device-sessions/${sessionId}/output-file-set/files.zip`,
          { headers: { authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}` } },
          (response) => {
            expect(response.statusCode).toBe(200);
            expect(response.headers['content-length']).toBeUndefined();
            expect(response.headers['transfer-encoding']).toBe('chunked');
            pipeline(response, fs.createWriteStream(target)).then(resolve, reject);
          },
        );
        request.on('error', reject);
      });
    });
    expect(await entriesOf(target)).toEqual([{ name: 'screen-recording.mp4', sha256: artifactSha }]);
    expect(growth.rssMiB, JSON.stringify(growth)).toBeLessThan(MAX_GROWTH_MIB);
    expect(growth.heapMiB, JSON.stringify(growth)).toBeLessThan(MAX_GROWTH_MIB);
  });

  it("writes a run's files.zip of a 200 MB artifact into the blob store with flat memory", async () => {
    let answer: { status: number; body: { id: number; size: number } } | undefined;
    const growth = await measuring(async () => {
      answer = await alice.call('POST', `/api/v2/runs/${runId}/files.zip`, { json: true });
    });
    expect(answer!.status).toBe(201);
    expect(answer!.body.size).toBeGreaterThan(ARTIFACT_MIB * MIB);
    const file = (await h.ctx.store.files.findOwned(alice.user.id, answer!.body.id))!;
    const entries = await h.ctx.blobs.withLocalFile(file.blobKey, entriesOf);
    expect(entries).toEqual([{ name: `${sessionId}-Big device/screen-recording.mp4`, sha256: artifactSha }]);
    expect(growth.rssMiB, JSON.stringify(growth)).toBeLessThan(MAX_GROWTH_MIB);
    expect(growth.heapMiB, JSON.stringify(growth)).toBeLessThan(MAX_GROWTH_MIB);
  });
});

/** Each entry of the zip at `file` with the SHA-256 of its bytes, read as a stream. */
function entriesOf(file: string): Promise<Array<{ name: string; sha256: string }>> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, validateEntrySizes: true }, (error, zip) => {
      if (error) return reject(error);
      const entries: Array<{ name: string; sha256: string }> = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (openError, stream) => {
          if (openError) return reject(openError);
          const hash = createHash('sha256');
          stream.on('data', (chunk: Buffer) => hash.update(chunk));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({ name: entry.fileName, sha256: hash.digest('hex') });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
