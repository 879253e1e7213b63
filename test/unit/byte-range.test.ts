import { describe, expect, it } from 'vitest';
import { rangeAsked } from '../../src/domain/byte-range.ts';
import { parseS3Location } from '../../src/domain/storage-location.ts';

describe('Range headers', () => {
  it.each([
    [undefined, { kind: 'whole' }],
    ['bytes=0-0', { kind: 'part', range: { start: 0, end: 0 } }],
    ['bytes=10-', { kind: 'part', range: { start: 10, end: 99 } }],
    ['bytes=-10', { kind: 'part', range: { start: 90, end: 99 } }],
    ['bytes=50-1000', { kind: 'part', range: { start: 50, end: 99 } }],
    ['bytes=100-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=5-1', { kind: 'whole' }],
    ['bytes=0-1,3-4', { kind: 'whole' }],
    ['bytes=-', { kind: 'whole' }],
    ['bytes=99999999999999999999-', { kind: 'unsatisfiable' }],
  ])('reads %s of 100 bytes', (header, asked) => {
    expect(rangeAsked(header, 100)).toEqual(asked);
  });

  it('finds nothing to serve in an empty file', () => {
    expect(rangeAsked('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('s3:// locations', () => {
  it.each([
    ['s3://my-bucket', { bucket: 'my-bucket', prefix: '' }],
    ['s3://my.bucket/a/b/', { bucket: 'my.bucket', prefix: 'a/b' }],
  ])('reads %s', (url, location) => {
    expect(parseS3Location(url)).toEqual(location);
  });

  it.each([
    ['http://bucket/x', 'must be an s3://bucket/prefix URL'],
    ['s3://', 'names a bucket S3 does not allow'],
    ['s3://Upper', 'names a bucket S3 does not allow'],
    ['s3://ab', 'names a bucket S3 does not allow'],
    ['s3://a..b', 'names a bucket S3 does not allow'],
    ['s3://bucket/a/../b', 'has a prefix with . or .. parts'],
  ])('refuses %s', (url, message) => {
    expect(() => parseS3Location(url)).toThrow(message);
  });
});
