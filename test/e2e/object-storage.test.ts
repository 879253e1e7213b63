/**
 * A cloud whose blobs live in an S3-compatible object store, through real processes: `devicecloud
 * serve --blob-url s3://…` against an S3 server on 127.0.0.1 (s3rver), an agent with virtual
 * devices, an upload, a run whose artifacts the server stores, whole and ranged downloads, and
 * nothing written to a local blob directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server } from '../support/s3-server.ts';
import { zip } from '../support/zips.ts';
import { cliBudget } from '../support/cli.ts';
import { Cloud, type CloudUser, until } from '../support/cloud.ts';
import { screen } from '../../examples/build.ts';

const SERVER_SIDE = 4;
const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/dist');
const BUCKET = 'devicecloud-e2e';
const SCRIPT = `mkdir -p "$OUTPUT_DIR" "$SCREENSHOT_DIR"
cp shot.png "$SCREENSHOT_DIR/start.png"
echo '<testsuite name="s3" tests="1"><testcase classname="s3.Store" name="works"/></testsuite>' > "$OUTPUT_DIR/junit.xml"
`;

describe('blobs in an object store (serve --blob-url s3://…)', () => {
  let s3server: S3rver;
  let s3: S3Client;
  let cloud: Cloud;
  let user: CloudUser;
  const savedEnv = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'devicecloud-s3-e2e-'));
    let endpoint: string;
    ({ server: s3server, endpoint } = await startS3Server(root));
    const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
    s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    // The server finds its credentials as a deployment would: the AWS SDK's chain, here the environment.
    process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
    cloud = new Cloud([
      '--blob-url',
      `s3://${BUCKET}/cloud-1/blobs`,
      '--s3-endpoint',
      endpoint,
      '--s3-force-path-style',
      'true',
    ]);
    await cloud.startServer();
    await cloud.startAgent('host-1', 1);
    user = await cloud.user('s3@example.com', 'GOLD');
  }, cliBudget(4));
  afterAll(async () => {
    await cloud?.stop();
    await s3server?.close();
    process.env.AWS_ACCESS_KEY_ID = savedEnv.id;
    process.env.AWS_SECRET_ACCESS_KEY = savedEnv.secret;
    if (savedEnv.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (savedEnv.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  }, 60_000);

  const objects = async () =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map((object) => object.Key!);

  it('stores uploads and run artifacts in the bucket and serves them whole and by range', async () => {
    const apk = fs.readFileSync(path.join(EXAMPLES, 'sample-app.apk'));
    const app = await user.upload(path.join(EXAMPLES, 'sample-app.apk'));
    const packagePath = path.join(cloud.dataDir, 'tests.zip');
    fs.writeFileSync(
      packagePath,
      await zip([
        ['run-tests.sh', SCRIPT, 0o100755],
        ['shot.png', screen(54, 96, [20, 120, 200])],
      ]),
    );
    const tests = await user.upload(packagePath);
    expect(
      (await objects()).filter((key) => /^cloud-1\/blobs\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(key)),
    ).toHaveLength(2);

    const headers = { authorization: `Basic ${Buffer.from(`${user.apiKey}:`).toString('base64')}` };
    const whole = await fetch(`${cloud.url}/api/me/files/${app.id}/file`, { headers });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(apk);
    const part = await fetch(`${cloud.url}/api/me/files/${app.id}/file`, {
      headers: { ...headers, range: 'bytes=100-199' },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${apk.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(apk.subarray(100, 200));

    const started = await user.api('POST', '/v2/runs', {
      osType: 'ANDROID',
      frameworkId: SERVER_SIDE,
      projectName: 'object storage',
      files: [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
      ],
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const run = await until(
      () => user.api('GET', `/v2/runs/${started.body.id}`).then((answer) => answer.body),
      (body) => body.state === 'FINISHED',
      60_000,
    );
    expect(run.successRatio).toBe(1);
    const sessions = (await user.api('GET', `/v2/runs/${run.id}/device-sessions`)).body.data;
    const base = `/me/projects/${started.body.projectId}/runs/${run.id}/device-sessions/${sessions[0].id}`;
    const shots = (await user.api('GET', `${base}/screenshots`)).body.data;
    expect(shots.length).toBeGreaterThan(0);
    const shot = await fetch(`${cloud.url}/api${base}/screenshots/${shots[0].id}`, { headers });
    expect(shot.status).toBe(200);
    expect(
      Buffer.from(await shot.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    // The artifacts went to the bucket, and nothing to a blob directory of the server.
    expect((await objects()).length).toBeGreaterThan(2);
    const local = path.join(cloud.dataDir, 'blobs');
    expect(fs.existsSync(local) ? fs.readdirSync(local).filter((name) => name !== 'tmp') : []).toEqual([]);
    expect((await objects()).filter((key) => key.startsWith('cloud-1/blobs/tmp/'))).toEqual([]);
  });
});
