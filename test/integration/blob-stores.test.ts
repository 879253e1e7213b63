/**
 * One blob store contract, two stores: the directory store, and the S3 store against a real S3
 * server speaking the protocol on 127.0.0.1 (s3rver, from the npm registry).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type S3rver from 's3rver';
import { afterAll, beforeAll } from 'vitest';
import { directoryBlobStore } from '../../src/store/blobs.ts';
import { s3BlobStore, type S3BlobSettings } from '../../src/store/blobs-s3.ts';
import { blobStoreContract } from '../support/blob-conformance.ts';
import { startS3Server } from '../support/s3-server.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-blob-stores-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const dir = path.join(root, 'dir');
blobStoreContract('directory', () => {
  const store = directoryBlobStore(dir);
  const tmp = path.join(dir, 'tmp');
  return {
    store,
    temporaries: async () => fs.readdirSync(tmp),
    leaveTemporary: async (time) => {
      const file = path.join(tmp, `crash-${time}`);
      fs.writeFileSync(file, 'half');
      fs.utimesSync(file, new Date(time), new Date(time));
    },
  };
});

let server: S3rver;
let settings: S3BlobSettings;
let admin: S3Client;
beforeAll(async () => {
  let endpoint: string;
  ({ server, endpoint } = await startS3Server(path.join(root, 's3')));
  settings = {
    bucket: 'devicecloud-test',
    prefix: 'cloud/blobs',
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  };
  admin = new S3Client({ ...settings, requestChecksumCalculation: 'WHEN_REQUIRED' });
  await admin.send(new CreateBucketCommand({ Bucket: settings.bucket }));
});
afterAll(() => server?.close());

blobStoreContract('S3', () => ({
  store: s3BlobStore(settings),
  temporaries: async () => {
    const page = await admin.send(new ListObjectsV2Command({ Bucket: settings.bucket, Prefix: 'cloud/blobs/tmp/' }));
    return (page.Contents ?? []).map((object) => object.Key!);
  },
  leaveTemporary: async (time) => {
    // s3rver keeps its objects as files: their time is the object's LastModified.
    const Key = `cloud/blobs/tmp/crash-${time}`;
    await admin.send(new PutObjectCommand({ Bucket: settings.bucket, Key, Body: 'half' }));
    const file = path.join(root, 's3', settings.bucket, `${Key}._S3rver_object`);
    fs.utimesSync(file, new Date(time), new Date(time));
  },
}));
