/**
 * Where uploads and artifacts live: a directory (shared by the servers of one cloud), or an
 * S3-compatible object store (docs/deploy.md#object-storage). Part of the one configuration
 * (config.ts), which reads and checks them with the rest.
 */
import path from 'node:path';
import { type S3Location, parseS3Location } from './domain/storage-location.ts';
import { type Setting, text, yesOrNo } from './config-values.ts';

export interface BlobConfig {
  /** Where uploads and artifacts live; servers of one cloud share it. Default: dataDir/blobs. */
  readonly blobDir: string | undefined;
  /**
   * `s3://bucket/prefix`: uploads and artifacts in an S3-compatible object store instead of a
   * directory (store/blobs-s3.ts); credentials come from the AWS SDK's usual chain, never from here.
   */
  readonly blobUrl: S3Location | undefined;
  /** The object store's endpoint when it is not AWS (http://minio.internal:9000). */
  readonly s3Endpoint: string | undefined;
  readonly s3Region: string;
  /** Bucket in the path, not the host name: what most stores other than AWS need. */
  readonly s3ForcePathStyle: boolean;
}

export const BLOB_SETTINGS: { readonly [K in keyof BlobConfig]: Setting<BlobConfig[K]> } = {
  blobDir: {
    flag: '--blob-dir',
    env: ['DEVICECLOUD_BLOB_DIR'],
    fallback: undefined,
    parse: (value) => {
      const dir = text(value);
      if (dir === '') throw new Error('must be a directory path');
      return path.resolve(dir);
    },
  },
  blobUrl: {
    flag: '--blob-url',
    env: ['DEVICECLOUD_BLOB_URL'],
    fallback: undefined,
    parse: (value) => parseS3Location(text(value)),
  },
  s3Endpoint: {
    flag: '--s3-endpoint',
    env: ['DEVICECLOUD_S3_ENDPOINT', 'AWS_ENDPOINT_URL_S3'],
    fallback: undefined,
    parse: (value) => {
      const url = text(value).replace(/\/+$/, '');
      if (url === '') return undefined;
      if (!/^https?:\/\/[^/\s]+$/.test(url))
        throw new Error('must be an http(s) URL with no path, e.g. http://minio:9000');
      return url;
    },
  },
  s3Region: {
    flag: '--s3-region',
    env: ['DEVICECLOUD_S3_REGION', 'AWS_REGION'],
    fallback: 'us-east-1',
    parse: (value) => {
      const region = text(value);
      if (!/^[a-z0-9-]{1,40}$/.test(region)) throw new Error('must be a region name such as eu-west-1');
      return region;
    },
  },
  s3ForcePathStyle: {
    flag: '--s3-force-path-style',
    env: ['DEVICECLOUD_S3_FORCE_PATH_STYLE'],
    fallback: false,
    parse: (value) => yesOrNo(value),
  },
};
