/**
 * The blob store in an S3-compatible object store (AWS S3, MinIO, Ceph RGW, R2…), for clouds whose
 * servers share no directory. Same contract as the directory store (store/blobs.ts): content
 * addressed, and nothing half-written under a real key. An upload streams, in parts of bounded size,
 * to a temporary key while it is hashed, and is then copied to its content key by the store itself
 * (no byte passes through us twice); an upload cut off leaves only a temporary object or an
 * unfinished multipart upload, which removeStaleTemporary clears as the directory store clears its
 * tmp folder.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { BLOB_KEY, type BlobStore, blobMeter, blobPath, type StoredBlob } from './blobs.ts';

export interface S3BlobSettings {
  readonly bucket: string;
  /** Keys live below it ('' for the bucket's root), e.g. `devicecloud/blobs`. */
  readonly prefix: string;
  /** For stores other than AWS (http://minio:9000); AWS's own when absent. */
  readonly endpoint: string | undefined;
  readonly region: string;
  /** bucket in the path rather than the host name, as most stores other than AWS need. */
  readonly forcePathStyle: boolean;
  /**
   * Given by tests; a deployment leaves them out, and the AWS SDK's usual chain finds them
   * (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance role), so that no key is
   * ever in our settings, logs or database.
   */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** Upload parts: 8 MiB, 4 in flight at most, so an upload of any size holds about 32 MiB. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;
/** CopyObject copies up to 5 GiB in one request; beyond, the copy goes in parts. */
const SINGLE_COPY_MAX = 5 * 1024 ** 3;
const COPY_PART_BYTES = 1024 ** 3;

export function s3BlobStore(settings: S3BlobSettings): BlobStore {
  const client = new S3Client({
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials,
    // Checksums only where S3 requires them: the newer default (trailing checksums in aws-chunked
    // bodies) is not understood by many S3-compatible stores. Our keys are SHA-256 of the bytes.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Bucket = settings.bucket;
  const root = settings.prefix === '' ? '' : `${settings.prefix.replace(/\/+$/, '')}/`;
  const tmpRoot = `${root}tmp/`;
  const keyOf = (key: string) => root + blobPath(key);

  async function exists(Key: string): Promise<number | undefined> {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket, Key }))).ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async function copy(from: string, to: string, size: number): Promise<void> {
    const CopySource = `${Bucket}/${encodeURI(from)}`;
    if (size <= SINGLE_COPY_MAX) {
      await client.send(new CopyObjectCommand({ Bucket, Key: to, CopySource }));
      return;
    }
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket, Key: to }));
    try {
      const Parts = [];
      for (let start = 0, PartNumber = 1; start < size; start += COPY_PART_BYTES, PartNumber += 1) {
        const end = Math.min(start + COPY_PART_BYTES, size) - 1;
        const part = await client.send(
          new UploadPartCopyCommand({
            Bucket,
            Key: to,
            UploadId,
            PartNumber,
            CopySource,
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        Parts.push({ PartNumber, ETag: part.CopyPartResult?.ETag });
      }
      await client.send(new CompleteMultipartUploadCommand({ Bucket, Key: to, UploadId, MultipartUpload: { Parts } }));
    } catch (error) {
      await client.send(new AbortMultipartUploadCommand({ Bucket, Key: to, UploadId })).catch(() => undefined);
      throw error;
    }
  }

  async function* objects(Prefix: string): AsyncIterable<{ readonly key: string; readonly modified: number }> {
    let ContinuationToken: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }));
      for (const item of page.Contents ?? []) {
        if (item.Key !== undefined) yield { key: item.Key, modified: item.LastModified?.getTime() ?? 0 };
      }
      ContinuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (ContinuationToken !== undefined);
  }

  return {
    async put(source, { maxBytes }) {
      const tmp = `${tmpRoot}${Date.now()}-${randomBytes(8).toString('hex')}`;
      const meter = blobMeter(maxBytes);
      const body = new PassThrough();
      const upload = new Upload({
        client,
        params: { Bucket, Key: tmp, Body: body },
        partSize: PART_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        leavePartsOnError: false,
      });
      const sent = upload.done();
      // An upload refused by the store stops reading: end the pipeline with its error, not a stall.
      sent.catch((error: unknown) => body.destroy(error as Error));
      try {
        await pipeline(source, meter, body);
        await sent;
      } catch (error) {
        await upload.abort().catch(() => undefined);
        await client.send(new DeleteObjectCommand({ Bucket, Key: tmp })).catch(() => undefined);
        throw error;
      }
      const sha256 = meter.sha256();
      const blob: StoredBlob = { key: sha256, size: meter.size(), sha256 };
      try {
        // The same bytes stored before: nothing to copy (content addressing is why).
        if ((await exists(keyOf(blob.key))) !== blob.size) await copy(tmp, keyOf(blob.key), blob.size);
      } finally {
        await client.send(new DeleteObjectCommand({ Bucket, Key: tmp })).catch(() => undefined);
      }
      return blob;
    },

    putFile(filePath) {
      return this.put(fs.createReadStream(filePath), { maxBytes: Number.POSITIVE_INFINITY });
    },

    read(key, range) {
      // The interface answers a stream at once (as fs does); the object's body is piped into it.
      const out = new PassThrough();
      const Key = keyOf(key);
      const Range = range === undefined ? undefined : `bytes=${range.start}-${range.end}`;
      client
        .send(new GetObjectCommand({ Bucket, Key, Range }))
        .then(async (answer) => {
          if (answer.Body === undefined) throw new Error(`blob ${key} has no body`);
          await pipeline(answer.Body as Readable, out);
        })
        .catch((error: unknown) => out.destroy(error as Error));
      return out;
    },

    async withLocalFile(key, work) {
      const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'devicecloud-blob-'));
      const file = path.join(dir, key);
      try {
        await pipeline(this.read(key), fs.createWriteStream(file, { flags: 'wx' }));
        return await work(file);
      } finally {
        await fs.promises.rm(dir, { recursive: true, force: true });
      }
    },

    size(key) {
      return exists(keyOf(key));
    },

    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
    },

    async *list() {
      for await (const object of objects(root)) {
        const name = object.key.slice(root.length);
        const key = name.slice(name.lastIndexOf('/') + 1);
        if (BLOB_KEY.test(key) && name === blobPath(key)) yield { key, modifiedTime: object.modified };
      }
    },

    async removeStaleTemporary(before) {
      let removed = 0;
      for await (const object of objects(tmpRoot)) {
        if (object.modified >= before) continue;
        await client.send(new DeleteObjectCommand({ Bucket, Key: object.key }));
        removed += 1;
      }
      // Parts of uploads a crash cut off are stored (and billed) until the upload is aborted.
      for (const upload of await unfinishedUploads(client, Bucket, tmpRoot)) {
        if ((upload.Initiated?.getTime() ?? 0) >= before) continue;
        await client.send(new AbortMultipartUploadCommand({ Bucket, Key: upload.Key, UploadId: upload.UploadId }));
        removed += 1;
      }
      return removed;
    },
  };
}

async function unfinishedUploads(client: S3Client, Bucket: string, Prefix: string) {
  try {
    return (await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix }))).Uploads ?? [];
  } catch (error) {
    // Some small S3 servers (s3rver among them) do not list uploads; their parts die with the
    // process. Anything else is a real failure.
    if (isNotImplemented(error)) return [];
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

function isNotImplemented(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotImplemented' || e.$metadata?.httpStatusCode === 501 || e.$metadata?.httpStatusCode === 405;
}
