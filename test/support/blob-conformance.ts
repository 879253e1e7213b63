/**
 * The contract of a blob store (store/blobs.ts), run against every implementation: the directory
 * store and the S3 store against a real S3 server (test/integration/blob-stores.test.ts).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BlobTooLargeError, type BlobStore } from '../../src/store/blobs.ts';

export interface BlobStoreUnderTest {
  readonly store: BlobStore;
  /** What the store keeps of uploads in progress or cut off (temporary files, objects, parts). */
  temporaries(): Promise<readonly string[]>;
  /** Leaves a temporary as a crash would, written at `time`. */
  leaveTemporary(time: number): Promise<void>;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Bytes that differ from one call to the next, so that tests do not share blobs. */
function someBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let offset = 0; offset < size; offset += 1024 * 1024)
    createHash('sha256').update(`${Math.random()}`).digest().copy(bytes, offset);
  return bytes;
}

export function blobStoreContract(name: string, open: () => BlobStoreUnderTest): void {
  describe(`blob store: ${name}`, () => {
    it('stores by content and reads the same bytes back; the same bytes again share the key', async () => {
      const { store } = open();
      const bytes = someBytes(100);
      const stored = await store.put(Readable.from([bytes]), { maxBytes: 100 });
      expect(stored).toEqual({ key: sha256(bytes), size: 100, sha256: sha256(bytes) });
      expect(await readAll(store.read(stored.key))).toEqual(bytes);
      expect(await store.size(stored.key)).toBe(100);
      expect((await store.put(Readable.from([bytes]), { maxBytes: 100 })).key).toBe(stored.key);
    });

    it('streams a blob larger than an upload part through, whole, and reads ranges of it', async () => {
      const { store, temporaries } = open();
      const bytes = someBytes(20 * 1024 * 1024 + 17);
      const chunks = Array.from({ length: 21 }, (_, i) => bytes.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024));
      const stored = await store.put(Readable.from(chunks), { maxBytes: bytes.length });
      expect(stored.key).toBe(sha256(bytes));
      expect(stored.size).toBe(bytes.length);
      expect(sha256(await readAll(store.read(stored.key)))).toBe(stored.key);
      const start = 9 * 1024 * 1024 - 3;
      expect(await readAll(store.read(stored.key, { start, end: start + 9 }))).toEqual(
        bytes.subarray(start, start + 10),
      );
      expect(await readAll(store.read(stored.key, { start: bytes.length - 1, end: bytes.length - 1 }))).toEqual(
        bytes.subarray(bytes.length - 1),
      );
      expect(await temporaries()).toEqual([]);
    });

    it('refuses more than the limit and keeps nothing, not even a temporary', async () => {
      const { store, temporaries } = open();
      await expect(store.put(Readable.from([someBytes(64), someBytes(64)]), { maxBytes: 100 })).rejects.toBeInstanceOf(
        BlobTooLargeError,
      );
      expect(await temporaries()).toEqual([]);
    });

    it('keeps nothing from a stream that breaks off, even after several upload parts', async () => {
      const { store, temporaries } = open();
      let sent = 0;
      const broken = new Readable({
        read() {
          if (sent === 12) return this.destroy(new Error('connection reset'));
          sent += 1;
          this.push(someBytes(1024 * 1024));
        },
      });
      await expect(store.put(broken, { maxBytes: 1024 ** 3 })).rejects.toThrow('connection reset');
      expect(await temporaries()).toEqual([]);
    });

    it('lists what it holds, gives a blob as a local file, and deletes', async () => {
      const { store } = open();
      const bytes = someBytes(300);
      const before = Date.now();
      const { key } = await store.put(Readable.from([bytes]), { maxBytes: 1000 });
      const listed = [];
      for await (const blob of store.list()) listed.push(blob);
      const entry = listed.find((blob) => blob.key === key);
      expect(entry).toBeDefined();
      // Object stores keep whole seconds.
      expect(entry!.modifiedTime).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(await store.withLocalFile(key, async (file) => fs.promises.readFile(file))).toEqual(bytes);
      await store.delete(key);
      expect(await store.size(key)).toBeUndefined();
      for await (const blob of store.list()) expect(blob.key).not.toBe(key);
      await expect(readAll(store.read(key))).rejects.toThrow();
    });

    it('removes the temporaries a crash left before a time, and only those', async () => {
      const { store, temporaries, leaveTemporary } = open();
      const now = Date.now();
      await leaveTemporary(now - 3_600_000);
      expect(await temporaries()).toHaveLength(1);
      expect(await store.removeStaleTemporary(now - 7_200_000)).toBe(0);
      expect(await store.removeStaleTemporary(now - 60_000)).toBe(1);
      expect(await temporaries()).toEqual([]);
    });

    it('refuses keys that are not hashes', () => {
      const { store } = open();
      expect(() => store.read('../../etc/passwd')).toThrow('invalid blob key');
    });
  });
}
