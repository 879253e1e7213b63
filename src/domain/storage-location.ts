/** Where an object store keeps the blobs: `s3://bucket/prefix` (docs/deploy.md#object-storage). */

export interface S3Location {
  readonly bucket: string;
  /** '' for the bucket's root; no leading or trailing slash. */
  readonly prefix: string;
}

/** S3's rules for bucket names (lower case, 3 to 63 characters, no leading or trailing dot or dash). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function parseS3Location(url: string): S3Location {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(url);
  if (match === null) throw new Error('must be an s3://bucket/prefix URL');
  const bucket = match[1]!;
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw new Error(
      `names a bucket S3 does not allow ('${bucket}'): 3 to 63 lower-case letters, digits, dots and dashes`,
    );
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix.split('/').some((part) => part === '.' || part === '..') || [...prefix].some((c) => c < ' ' || c === '\\'))
    throw new Error('has a prefix with . or .. parts or control characters');
  return { bucket, prefix };
}
