import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobTooLargeError, directoryBlobStore } from '../../src/store/blobs.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-blob-test-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('directory blob store', () => {
  const blobs = directoryBlobStore(root);

  it('stores by content and reads the same bytes back', async () => {
    const bytes = Buffer.from('hello devices');
    const stored = await blobs.put(Readable.from([bytes]), { maxBytes: 100 });
    expect(stored).toEqual({
      key: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      sha256: stored.key,
    });
    expect(await readAll(blobs.read(stored.key))).toEqual(bytes);
    expect(await blobs.size(stored.key)).toBe(bytes.length);
    const again = await blobs.put(Readable.from([bytes]), { maxBytes: 100 });
    expect(again.key).toBe(stored.key);
  });

  it('refuses more than the limit and keeps nothing, not even a temporary file', async () => {
    await expect(
      blobs.put(Readable.from([Buffer.alloc(64), Buffer.alloc(64)]), { maxBytes: 100 }),
    ).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(fs.readdirSync(path.join(root, 'tmp'))).toEqual([]);
  });

  it('keeps nothing from a stream that breaks off', async () => {
    const broken = new Readable({
      read() {
        this.push(Buffer.alloc(10));
        this.destroy(new Error('connection reset'));
      },
    });
    await expect(blobs.put(broken, { maxBytes: 1000 })).rejects.toThrow('connection reset');
    expect(fs.readdirSync(path.join(root, 'tmp'))).toEqual([]);
  });

  it('refuses keys that are not hashes', () => {
    expect(() => blobs.read('../../etc/passwd')).toThrow('invalid blob key');
  });
});
