/**
 * Uploads to the S3 blob store stream in parts of bounded size (docs/deploy.md#object-storage): a
 * 512 MiB upload, produced a chunk at a time, goes to an S3 server in another process (so that
 * only our own memory is sampled) while this process's memory may not grow by anything near it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3BlobStore, type S3BlobSettings } from '../../src/store/blobs-s3.ts';
import { measuring } from '../support/memory.ts';

const MIB = 1024 * 1024;
const UPLOAD_MIB = 512;
/**
 * Four 8 MiB parts in flight, the part being filled (the SDK concatenates, and a part's leftover
 * keeps its whole buffer alive), the SDK's and the sockets' buffers: measured 98-126 MiB resident
 * for uploads of 128 and of 512 MiB alike. Bounded, not proportional, which is the promise.
 */
const MAX_GROWTH_MIB = 160;

describe('the S3 blob store keeps memory flat', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-s3-memory-'));
  let server: ChildProcess;
  let settings: S3BlobSettings;

  beforeAll(async () => {
    const script = `import S3rver from 's3rver';
      const server = new S3rver({ port: 0, address: '127.0.0.1', directory: process.argv[1], silent: true });
      const { port } = await server.run();
      console.log('port ' + port);`;
    server = spawn(process.execPath, ['--input-type=module', '-e', script, dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      server.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
      server.stdout!.on('data', (chunk: Buffer) => {
        const match = /port (\d+)/.exec(chunk.toString());
        if (match !== null) resolve(Number(match[1]));
      });
    });
    settings = {
      bucket: 'memory',
      prefix: '',
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    };
    await new S3Client(settings).send(new CreateBucketCommand({ Bucket: settings.bucket }));
  });
  afterAll(() => {
    server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`uploads ${UPLOAD_MIB} MiB with flat memory and reads the same bytes back`, async () => {
    const store = s3BlobStore(settings);
    const hash = createHash('sha256');
    let produced = 0;
    const source = new Readable({
      read() {
        if (produced === UPLOAD_MIB) return this.push(null);
        produced += 1;
        const chunk = randomBytes(MIB);
        hash.update(chunk);
        this.push(chunk);
      },
    });
    let key = '';
    const growth = await measuring(async () => {
      key = (await store.put(source, { maxBytes: Number.POSITIVE_INFINITY })).key;
    });
    expect(key).toBe(hash.digest('hex'));
    // Resident memory only: the heap figure also counts the 1 MiB chunks already sent, which the
    // collector takes when it likes (it measured more than the upload's size for a small upload).
    expect(growth.rssMiB, JSON.stringify(growth)).toBeLessThan(MAX_GROWTH_MIB);
    const back = createHash('sha256');
    const reading = await measuring(async () => {
      for await (const chunk of store.read(key)) back.update(chunk as Buffer);
    });
    expect(back.digest('hex')).toBe(key);
    expect(reading.rssMiB, JSON.stringify(reading)).toBeLessThan(MAX_GROWTH_MIB);
  });
});
