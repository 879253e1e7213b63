/**
 * Blob storage for uploads and artifacts: content-addressed (the key is the SHA-256 of the bytes),
 * so identical uploads share one copy. Writes stream through a hash into a temporary file that is
 * renamed into place only when complete: a crash or a cut connection leaves no partial blob under a
 * real key. The directory implementation is the default; store/blobs-s3.ts keeps them in an
 * S3-compatible object store behind the same interface (test/support/blob-conformance.ts holds both
 * to one contract).
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange } from '../domain/byte-range.ts';

export type { ByteRange };

export interface StoredBlob {
  readonly key: string;
  readonly size: number;
  readonly sha256: string;
}

export interface BlobStore {
  /** Stores a stream; rejects with BlobTooLargeError beyond `maxBytes` (nothing is kept then). */
  put(source: Readable, options: { maxBytes: number }): Promise<StoredBlob>;
  /** A file already on local disk (agent artifacts written by the server, tests). */
  putFile(filePath: string): Promise<StoredBlob>;
  /** The bytes, or the inclusive byte range of them (ranged downloads, docs/api.md#files). */
  read(key: string, range?: ByteRange): Readable;
  /** Runs `work` with the blob as a file on local disk (a download first, for remote stores). */
  withLocalFile<T>(key: string, work: (filePath: string) => Promise<T>): Promise<T>;
  size(key: string): Promise<number | undefined>;
  delete(key: string): Promise<void>;
  /** Every stored blob and when it was last written, for the retention job's sweep of orphans. */
  list(): AsyncIterable<{ readonly key: string; readonly modifiedTime: number }>;
  /** Removes what uploads cut off by a crash left half-written before `before`; answers how many. */
  removeStaleTemporary(before: number): Promise<number>;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

export const BLOB_KEY = /^[0-9a-f]{64}$/;

/** A stored blob's place below the store's root: two levels of fan-out, as git does. */
export function blobPath(key: string): string {
  if (!BLOB_KEY.test(key)) throw new Error(`invalid blob key ${key.slice(0, 80)}`);
  return `${key.slice(0, 2)}/${key.slice(2, 4)}/${key}`;
}

/** Counts and hashes what passes, refusing more than `maxBytes`. */
export function blobMeter(
  maxBytes: number,
): Transform & { readonly size: () => number; readonly sha256: () => string } {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new BlobTooLargeError(maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return Object.assign(meter, { size: () => size, sha256: () => hash.digest('hex') });
}

export function directoryBlobStore(root: string): BlobStore {
  const tmpDir = path.join(root, 'tmp');
  fs.mkdirSync(tmpDir, { recursive: true });
  const pathOf = (key: string) => path.join(root, blobPath(key));

  async function settle(tmp: string, sha256: string, size: number): Promise<StoredBlob> {
    const target = pathOf(sha256);
    await fs.promises.mkdir(path.dirname(target), { recursive: true });
    // rename is atomic; when the same bytes are already stored it simply replaces them.
    await fs.promises.rename(tmp, target);
    return { key: sha256, size, sha256 };
  }

  return {
    async put(source, { maxBytes }) {
      const tmp = path.join(tmpDir, `${Date.now()}-${randomBytes(8).toString('hex')}`);
      const meter = blobMeter(maxBytes);
      const file = fs.createWriteStream(tmp, { flags: 'wx' });
      try {
        await pipeline(source, meter, file);
      } catch (error) {
        // The file is opened asynchronously: a source that fails first can make the removal run
        // before the open, which then leaves an empty file behind. Remove it once it is closed.
        if (!file.closed) await once(file, 'close').catch(() => undefined);
        await fs.promises.rm(tmp, { force: true });
        throw error;
      }
      return settle(tmp, meter.sha256(), meter.size());
    },

    putFile(filePath) {
      return this.put(fs.createReadStream(filePath), { maxBytes: Number.POSITIVE_INFINITY });
    },

    read(key, range) {
      return fs.createReadStream(pathOf(key), range);
    },

    withLocalFile(key, work) {
      return work(pathOf(key));
    },

    async size(key) {
      try {
        return (await fs.promises.stat(pathOf(key))).size;
      } catch {
        return undefined;
      }
    },

    async delete(key) {
      await fs.promises.rm(pathOf(key), { force: true });
    },

    async *list() {
      for (const first of await subfolders(root)) {
        for (const second of await subfolders(path.join(root, first))) {
          const dir = path.join(root, first, second);
          for (const key of await fs.promises.readdir(dir).catch(() => [] as string[])) {
            if (!BLOB_KEY.test(key)) continue;
            const stat = await fs.promises.stat(path.join(dir, key)).catch(() => undefined);
            if (stat !== undefined) yield { key, modifiedTime: stat.mtimeMs };
          }
        }
      }
    },

    async removeStaleTemporary(before) {
      let removed = 0;
      for (const name of await fs.promises.readdir(tmpDir)) {
        const file = path.join(tmpDir, name);
        const stat = await fs.promises.stat(file).catch(() => undefined);
        if (stat === undefined || stat.mtimeMs >= before) continue;
        await fs.promises.rm(file, { force: true });
        removed += 1;
      }
      return removed;
    },
  };
}

/** The two-hex-digit fan-out folders of the store (not `tmp`). */
async function subfolders(dir: string): Promise<string[]> {
  const entries = await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name)).map((entry) => entry.name);
}
