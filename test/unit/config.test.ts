import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dc-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('configuration', () => {
  it('has defaults for the local cloud', () => {
    const config = loadConfig({ env: {} });
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', databaseUrl: undefined, flavour: 'private' });
    expect(config.dataDir).toBe(path.resolve('data'));
  });

  it('takes a file, then the environment, then flags, each over the one before', () => {
    const file = path.join(dir, 'layers.json');
    fs.writeFileSync(file, JSON.stringify({ port: 9000, flavour: 'public', host: '0.0.0.0' }));
    const config = loadConfig({
      file,
      env: { DEVICECLOUD_PORT: '9001', DEVICECLOUD_FLAVOUR: 'enterprise' },
      flags: { port: '9002' },
    });
    expect(config).toMatchObject({ port: 9002, flavour: 'enterprise', host: '0.0.0.0' });
  });

  it('reads DATABASE_URL for PostgreSQL', () => {
    expect(loadConfig({ env: { DATABASE_URL: 'postgres://u@db:5432/x' } }).databaseUrl).toBe('postgres://u@db:5432/x');
  });

  it.each([
    [{ flags: { port: 'eighty' } }, "Invalid --port: 'eighty' must be a port number"],
    [{ env: { DEVICECLOUD_PORT: '70000' } }, 'Invalid --port (from environment variable DEVICECLOUD_PORT)'],
    [{ flags: { flavour: 'cloudy' } }, 'must be one of public, private, enterprise'],
    [{ env: { DATABASE_URL: 'mysql://x' } }, 'must be a postgres:// or postgresql:// URL'],
    [{ flags: { publicUrl: 'ftp://x' } }, 'must be an http or https URL'],
    [{ flags: { blobUrl: 'gs://bucket' } }, "Invalid --blob-url: 'gs://bucket' must be an s3://bucket/prefix URL"],
    [{ flags: { blobUrl: 's3://bucket', blobDir: '/x' } }, 'Give --blob-dir or --blob-url, not both'],
    [{ env: { DEVICECLOUD_S3_ENDPOINT: 'minio:9000' } }, 'must be an http(s) URL with no path'],
  ])('refuses %j with a message naming the setting', (sources, message) => {
    expect(() => loadConfig({ env: {}, ...sources })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, ...sources })).toThrow(message);
  });

  it('refuses unknown settings in a config file', () => {
    const file = path.join(dir, 'unknown.json');
    fs.writeFileSync(file, JSON.stringify({ prot: 1 }));
    expect(() => loadConfig({ file, env: {} })).toThrow('unknown settings: prot');
  });
});
