/**
 * Storage quotas (domain/storage.ts), on both engines: an upload or an artifact that would take an
 * account beyond its quota is refused and leaves the store as it was; other accounts are not
 * affected; deleting files, cascades and retention give the space back; operators override the
 * plan's default. After every test the usage kept by the triggers equals the sum of the files.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLAN_STORAGE_QUOTA_BYTES } from '../../src/domain/storage.ts';
import type { Device } from '../../src/domain/devices.ts';
import { applyRetention } from '../../src/jobs/retention.ts';
import { ENGINES } from '../support/engines.ts';
import { androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, multipart, parseXml, upload } from '../support/harness.ts';
import { difference, snapshotter } from '../support/snapshot.ts';

const DAY = 24 * 60 * 60 * 1000;
const SERVER_SIDE = 7;

describe.each(ENGINES)('storage quotas (%s)', (engine) => {
  let h: Harness;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    // Blob ages are the file system's: the clock starts at the real time so that retention agrees.
    h.setTime(Date.now());
    admin = await h.user({ role: 'ADMIN' });
    alice = await h.user({ plan: 'SILVER' });
    bob = await h.user({ plan: 'SILVER' });
  });
  afterEach(async () => {
    // The usage the triggers kept is exactly what the files add up to, whatever the test did.
    const { rows } = await sql<{ user_id: number; used: number | string; counted: number | string | null }>`
      SELECT u.id AS user_id, COALESCE(s.used_bytes, 0) AS used, (SELECT SUM(f.size) FROM files f WHERE f.user_id = u.id) AS counted
      FROM users u LEFT JOIN storage_usage s ON s.user_id = u.id`.execute(h.database.db);
    for (const row of rows) expect(Number(row.used), `user ${row.user_id}`).toBe(Number(row.counted ?? 0));
    await h.close();
  });

  const put = (user: TestUser, name: string, content: string | Buffer) =>
    upload(h.app, user.key, '/api/me/files', name, content);
  const me = async (user: TestUser) => (await user.call('GET', '/api/me', { json: true })).body;
  const setQuota = (user: TestUser, storageQuotaBytes: unknown) =>
    admin.call('POST', `/api/admin/users/${user.user.id}`, { json: true, body: { storageQuotaBytes } });

  it("shows the usage and the plan's quota in /api/me, in JSON and XML, and counts uploads and deletions", async () => {
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 0, storageQuotaBytes: PLAN_STORAGE_QUOTA_BYTES.SILVER });
    const first = await put(alice, 'a.csv', 'x'.repeat(300));
    expect(first.status, first.text).toBe(201);
    // The same bytes again count again: every file counts its own size, as listed.
    expect((await put(alice, 'b.csv', 'x'.repeat(300))).status).toBe(201);
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 600 });
    const xml = parseXml((await alice.call('GET', '/api/me')).text);
    expect(xml.apiUser).toMatchObject({
      storageUsedBytes: '600',
      storageQuotaBytes: String(PLAN_STORAGE_QUOTA_BYTES.SILVER),
    });
    expect((await alice.call('DELETE', `/api/me/files/${first.body.id}`, { json: true })).status).toBe(204);
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 300 });
    expect(await me(bob)).toMatchObject({ storageUsedBytes: 0 });
    const gold = await h.user({ plan: 'GOLD' });
    expect(await me(gold)).toMatchObject({ storageQuotaBytes: PLAN_STORAGE_QUOTA_BYTES.GOLD });
  });

  it('refuses an upload to an account at its quota, in the negotiated format, and changes nothing; others upload as before', async () => {
    expect((await setQuota(alice, 500)).body).toMatchObject({ storageQuotaBytes: 500, storageUsedBytes: 0 });
    expect((await put(alice, 'a.csv', 'a'.repeat(500))).status).toBe(201);
    const snapshot = await snapshotter(h.database, h.blobDir);
    const before = await snapshot();

    const refused = await put(alice, 'more.csv', 'b'.repeat(10));
    expect(refused.status).toBe(413);
    expect(refused.body).toEqual({
      statusCode: 413,
      message:
        'more.csv cannot be stored: 500 bytes (500 bytes) of the storage quota of 500 bytes (500 bytes) are used. Nothing was stored; delete files you no longer need, or ask an operator for a larger quota',
    });
    const form = multipart('more.csv', 'b');
    const xml = await h.app.inject({
      method: 'POST',
      url: '/api/me/files',
      payload: form.body,
      headers: { ...form.headers, authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}` },
    });
    expect(xml.statusCode).toBe(413);
    expect(parseXml(xml.body).apiExceptionMessage).toMatchObject({
      statusCode: '413',
      message: expect.stringContaining('storage quota of 500 bytes'),
    });
    // A legacy project slot goes through the same check.
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'P' } })).body.id;
    const afterProject = await snapshot();
    expect((await upload(h.app, alice.key, `/api/me/projects/${project}/files/data`, 'd.csv', 'c')).status).toBe(413);
    expect(difference(afterProject, await snapshot())).toBe('');
    expect(difference(before, afterProject)).toBe('project_configs: 0 → 1 rows; projects: 0 → 1 rows');

    const bobs = await put(bob, 'bob.csv', 'b'.repeat(2000));
    expect(bobs.status, bobs.text).toBe(201);
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 500, storageQuotaBytes: 500 });
  });

  it('cuts an upload that would go over where the quota ends, leaving no blob or temporary file', async () => {
    expect((await setQuota(alice, 1000)).status).toBe(200);
    expect((await put(alice, 'a.csv', 'a'.repeat(900))).status).toBe(201);
    const snapshot = await snapshotter(h.database, h.blobDir);
    const before = await snapshot();
    const refused = await put(alice, 'big.csv', 'b'.repeat(64 * 1024));
    expect(refused.status).toBe(413);
    expect(refused.body.message).toMatch(
      /^The file is larger than the 100 bytes \(100 bytes\) left: 900 bytes \(900 bytes\) of the storage quota of 1000 bytes/,
    );
    expect(difference(before, await snapshot())).toBe('');
    // What still fits is taken.
    expect((await put(alice, 'fits.csv', 'c'.repeat(100))).status).toBe(201);
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 1000 });
  });

  it('lets only one of two uploads through when together they would go over, however they interleave', async () => {
    expect((await setQuota(alice, 1000)).status).toBe(200);
    const answers = await Promise.all([put(alice, 'one.csv', '1'.repeat(600)), put(alice, 'two.csv', '2'.repeat(600))]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 413]);
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 600 });
    const files = await alice.call('GET', '/api/me/files', { json: true });
    expect(files.body.total).toBe(1);
  });

  it('drops an artifact that would go over, says so on the device run, and keeps its results', async () => {
    const agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1')]);
    await agent.cleanAll();
    const app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example', min_sdk: '24' },
    });
    const tests = await fixtures.file(h.ctx, alice.user, {
      name: 'tests.zip',
      inputType: 'TEST',
      properties: { entry_script: 'run-tests.sh' },
    });
    const used = app.size + tests.size;
    expect((await setQuota(alice, used + 100)).status).toBe(200);
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    const group = groups.body.data.find((g: { displayName: string }) => g.displayName === 'All Android devices').id;
    const run = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: {
        osType: 'ANDROID',
        frameworkId: SERVER_SIDE,
        projectName: 'P',
        deviceGroupId: group,
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
      },
    });
    expect(run.status, run.text).toBe(201);
    const [assignment] = (await agent.claim(['a1'])).assignments;
    const deviceRunId = assignment!.deviceRunId;
    const artifact = (name: string, body: string, headers: Record<string, string> = {}) =>
      h.app.inject({
        method: 'PUT',
        url: `/agent/v1/device-runs/${deviceRunId}/artifacts?name=${name}&kind=output`,
        payload: body,
        headers: {
          authorization: `Bearer ${agent.token}`,
          'content-type': 'application/octet-stream',
          accept: 'application/json',
          ...headers,
        },
      });

    expect((await artifact('small.txt', 's'.repeat(60))).statusCode).toBe(201);
    const snapshot = await snapshotter(h.database, h.blobDir);
    const before = await snapshot();
    // Refused on its Content-Length before a byte is stored, and when streamed without one.
    const declared = await artifact('video.mp4', 'v'.repeat(5000));
    expect(declared.statusCode).toBe(413);
    expect(JSON.parse(declared.body).message).toContain('Artifact video.mp4 (4.9 KiB, 5000 bytes) would not fit');
    const chunked = await h.app.inject({
      method: 'PUT',
      url: `/agent/v1/device-runs/${deviceRunId}/artifacts?name=log.txt&kind=log`,
      // A stream: sent without a Content-Length.
      payload: Readable.from(Array.from({ length: 10 }, () => Buffer.from('l'.repeat(100)))),
      headers: {
        authorization: `Bearer ${agent.token}`,
        'content-type': 'application/octet-stream',
        accept: 'application/json',
      },
    });
    expect(chunked.statusCode, chunked.body).toBe(413);
    expect(JSON.parse(chunked.body).message).toContain('Artifact log.txt is larger than the 40 bytes left');
    const changed = difference(before, await snapshot());
    // Only the notes were written: no file, no blob, no temporary file.
    expect(changed).toBe('rows changed in place');

    const result = {
      seq: 5,
      outcome: 'SUCCEEDED',
      failReason: null,
      testCases: [testCase('testLogin')],
      steps: [{ type: 'SENDING_RESULTS', time: h.ctx.clock() }],
    };
    expect((await agent.post(`/device-runs/${deviceRunId}/result`, result)).status).toBe(200);
    const session = await alice.call('GET', `/api/v2/device-sessions/${deviceRunId}`, { json: true });
    expect(session.body).toMatchObject({ state: 'SUCCEEDED', testCasePassedCount: 1 });
    const steps = (await alice.call('GET', `/api/v2/device-sessions/${deviceRunId}/steps`, { json: true })).body.data;
    const notes = steps
      .map((step: { failReason: string | null }) => step.failReason)
      .filter(Boolean)
      .join('\n');
    expect(notes).toContain('Artifact video.mp4 (4.9 KiB, 5000 bytes) would not fit');
    expect(notes).toContain('Artifact log.txt is larger than the 40 bytes left');
    expect(notes).toContain('it was not kept');
    const outputs = await alice.call('GET', `/api/v2/device-sessions/${deviceRunId}/output-file-set/files`, {
      json: true,
    });
    expect(outputs.body.data.map((file: { name: string }) => file.name)).toEqual(['small.txt']);
  });

  it('stores nothing of an artifact whose connection is cut, and the server is not left waiting for it', async () => {
    const agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1')]);
    await agent.cleanAll();
    const app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example', min_sdk: '24' },
    });
    const tests = await fixtures.file(h.ctx, alice.user, {
      name: 'tests.zip',
      inputType: 'TEST',
      properties: { entry_script: 'run-tests.sh' },
    });
    const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
    const group = groups.body.data.find((g: { displayName: string }) => g.displayName === 'All Android devices').id;
    await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: {
        osType: 'ANDROID',
        frameworkId: SERVER_SIDE,
        projectName: 'P',
        deviceGroupId: group,
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
      },
    });
    const [assignment] = (await agent.claim(['a1'])).assignments;
    const snapshot = await snapshotter(h.database, h.blobDir);
    const before = await snapshot();
    const address = new URL(await h.app.listen({ port: 0, host: '127.0.0.1' }));
    const socket = net.connect(Number(address.port), address.hostname);
    await once(socket, 'connect');
    socket.write(
      `PUT /agent/v1/device-runs/${assignment!.deviceRunId}/artifacts?name=cut.log&kind=log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${agent.token}\r\n` +
        'Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n' +
        'x'.repeat(512),
    );
    // The server has begun writing it to a temporary file when the connection goes.
    await expect.poll(() => fs.readdirSync(path.join(h.blobDir, 'tmp')).length).toBe(1);
    socket.destroy();
    await expect.poll(() => fs.readdirSync(path.join(h.blobDir, 'tmp')).length).toBe(0);
    expect(difference(before, await snapshot())).toBe('');
  });

  it('gives the space back when retention archives runs, and when projects go', async () => {
    const devices: Device[] = [await fixtures.device(h.ctx, 'Pixel')];
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Days' } })).body.id;
    expect(
      (
        await alice.call('POST', `/api/me/projects/${project}`, {
          json: true,
          form: { archivingStrategy: 'DAYS', archivingItemCount: '30' },
        })
      ).status,
    ).toBe(200);
    const run = await fixtures.run(h.ctx, alice.user, project, devices, ['SUCCEEDED']);
    const [deviceRun] = await h.ctx.store.deviceRuns.ofRuns([run.id]);
    await fixtures.file(h.ctx, alice.user, {
      name: 'old.log',
      inputType: 'DATA',
      bytes: 'o'.repeat(700),
      outputOf: deviceRun!.id,
    });
    const kept = await put(alice, 'kept.csv', 'k'.repeat(50));
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 750 });
    // At its quota, the account can store nothing more until retention frees the run's artifacts.
    expect((await setQuota(alice, 750)).status).toBe(200);
    expect((await put(alice, 'new.csv', 'n'.repeat(500))).status).toBe(413);
    h.advance(31 * DAY);
    expect(await applyRetention(h.ctx, () => undefined)).toMatchObject({ archivedRuns: 1 });
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 50 });
    expect((await put(alice, 'new.csv', 'n'.repeat(500))).status).toBe(201);

    const other = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Other' } })).body.id;
    expect(
      (await upload(h.app, alice.key, `/api/me/projects/${other}/files/data`, 'd.csv', 'd'.repeat(100))).status,
    ).toBe(201);
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 650 });
    expect((await alice.call('DELETE', `/api/me/projects/${other}`, { json: true })).status).toBe(204);
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 550 });
    expect(kept.status).toBe(201);
  });

  it("lets operators set a quota and go back to the plan's default; a bad value changes nothing", async () => {
    expect((await put(alice, 'a.csv', 'a'.repeat(100))).status).toBe(201);
    const set = await setQuota(alice, '80');
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ email: alice.user.email, storageUsedBytes: 100, storageQuotaBytes: 80 });
    expect(await me(alice)).toMatchObject({ storageUsedBytes: 100, storageQuotaBytes: 80 });
    // Lowered below the usage: nothing is removed, nothing more is stored.
    expect((await put(alice, 'b.csv', 'b')).status).toBe(413);
    const listed = await admin.call('GET', '/api/admin/users', { json: true });
    expect(listed.body.data.find((user: { id: number }) => user.id === alice.user.id)).toMatchObject({
      storageUsedBytes: 100,
      storageQuotaBytes: 80,
    });

    for (const bad of [-1, 1.5, 'lots', 2 ** 51]) {
      const refused = await admin.call('POST', `/api/admin/users/${alice.user.id}`, {
        json: true,
        body: { plan: 'GOLD', storageQuotaBytes: bad },
      });
      expect(refused.status, String(bad)).toBe(400);
      expect(refused.body.message).toContain('storageQuotaBytes');
    }
    expect(await me(alice)).toMatchObject({ plan: 'SILVER', storageQuotaBytes: 80 });

    expect((await setQuota(alice, 'default')).body).toMatchObject({
      storageQuotaBytes: PLAN_STORAGE_QUOTA_BYTES.SILVER,
    });
    expect((await put(alice, 'b.csv', 'b')).status).toBe(201);
    // A plan change moves a default quota with it.
    expect(
      (await admin.call('POST', `/api/admin/users/${alice.user.id}`, { json: true, body: { plan: 'PLATINUM' } })).body,
    ).toMatchObject({ storageQuotaBytes: PLAN_STORAGE_QUOTA_BYTES.PLATINUM });
    // Only operators: a user cannot raise their own quota.
    expect(
      (
        await alice.call('POST', `/api/admin/users/${alice.user.id}`, {
          json: true,
          body: { storageQuotaBytes: 2 ** 40 },
        })
      ).status,
    ).toBe(403);
  });
});
