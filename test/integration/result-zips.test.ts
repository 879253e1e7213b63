/**
 * Zips of results and the file sets of device sessions (docs/api.md#result-zips), on both
 * engines: what an agent uploaded comes back, byte for byte, under safe and unique names in a
 * stable order; a run's zip is a file of the user's (what the established API answers); replaced
 * sessions are not the run's results; another user's ids are 404.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../../src/domain/devices.ts';
import { PROTOCOL_PREFIX } from '../../src/protocol/v1.ts';
import { setStorageQuota } from '../../src/services/storage.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';
import { unzip } from '../support/unzip.ts';

type Artifact = readonly [name: string, kind: 'log' | 'screenshot' | 'output' | 'video' | 'junit', bytes: Buffer];

const LOG_A = Buffer.from('I/TestRunner: started\n'.repeat(500));
const PNG_A = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4, 250, 251, 252]);
const REPORT_A = Buffer.from('{"passed": 3}');
const VIDEO_A = Buffer.alloc(70_000, 7);
const LOG_B = Buffer.from('device B says hello\n');
const PNG_B = Buffer.from([0x89, 0x50, 0x4e, 0x47, 9, 9, 9]);
const HOSTILE_DEVICE = '../..\\Tablet: "X"';

describe.each(ENGINES)('result zips and file sets (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let agent: FakeAgent;
  let devices: Device[];
  let projectId: number;
  const serials = [`zips-a-${engine}`, `zips-b-${engine}`];

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user();
    projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Zips' } })).body.id;
    agent = await fakeAgent(h.app, h.ctx, `zips-${engine}`);
    await agent.hello([androidDevice(serials[0]!, 'Pixel 8'), androidDevice(serials[1]!, HOSTILE_DEVICE)]);
    await agent.cleanAll();
    const byId = await h.ctx.store.devices.byIds([...agent.deviceIds.values()]);
    devices = serials.map((serial) => byId.get(agent.deviceIds.get(serial)!)!);
  });
  afterAll(async () => h?.close());

  /** A run on both devices that the agent runs: uploads `artifacts[i]` and `samples[i]` for device i. */
  async function finishedRun(artifacts: Artifact[][], samples: unknown[][] = [[], []]) {
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices, ['WAITING', 'WAITING']);
    const { assignments } = await agent.claim(serials);
    const sessions = assignments.map((a) => a.deviceRunId).sort((x, y) => x - y);
    expect(sessions).toHaveLength(2);
    for (const [index, deviceRunId] of sessions.entries()) {
      for (const [name, kind, bytes] of artifacts[index] ?? []) {
        const answer = await h.app.inject({
          method: 'PUT',
          url: `${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/artifacts?name=${encodeURIComponent(name)}&kind=${kind}`,
          payload: bytes,
          headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/octet-stream' },
        });
        expect(answer.statusCode, answer.body).toBe(201);
      }
      const result = await agent.post(`/device-runs/${deviceRunId}/result`, {
        seq: 1000,
        outcome: 'SUCCEEDED',
        failReason: null,
        testCases: [],
        samples: samples[index] ?? [],
      });
      expect(result.status, result.text).toBe(200);
    }
    await agent.cleanAll();
    return { run, sessions: sessions as [number, number] };
  }

  /** POSTs a run zip, then downloads the file it answered, as the Java client does. */
  async function runZip(user: TestUser, url: string) {
    const made = await user.call('POST', url, { json: true });
    expect(made.status, made.text).toBe(201);
    const download = await h.app.inject({
      method: 'GET',
      url: `/api/me/files/${made.body.id}/file`,
      headers: { authorization: `Basic ${Buffer.from(`${user.key}:`).toString('base64')}` },
    });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-length']).toBe(String(made.body.size));
    return { record: made.body, entries: await unzip(download.rawPayload) };
  }

  const get = (user: TestUser, url: string, accept?: string) =>
    h.app.inject({
      method: 'GET',
      url,
      headers: {
        authorization: `Basic ${Buffer.from(`${user.key}:`).toString('base64')}`,
        ...(accept === undefined ? {} : { accept }),
      },
    });

  it("zips a run's screenshots, logs, files and performance across its sessions, as the agent sent them", async () => {
    const { run, sessions } = await finishedRun(
      [
        [
          ['device.log', 'log', LOG_A],
          ['home.png', 'screenshot', PNG_A],
          ['report.json', 'output', REPORT_A],
          ['run.mp4', 'video', VIDEO_A],
        ],
        [
          ['device.log', 'log', LOG_B],
          ['home.png', 'screenshot', PNG_B],
        ],
      ],
      [
        [
          { timestamp: 1_000, cpuUsage: 0.25, memUsage: 2048, packageName: 'com.example' },
          { timestamp: 2_000, cpuUsage: 0.5, memUsage: null, packageName: '=cmd|calc' },
        ],
        [],
      ],
    );
    const [a, b] = sessions;
    const folderA = `${a}-Pixel 8`;
    const folderB = `${b}-.._.._Tablet_ _X_`;
    const base = `/api/me/projects/${projectId}/runs/${run.id}`;

    const screenshots = await runZip(alice, `${base}/screenshots.zip`);
    expect(screenshots.record).toMatchObject({
      name: `run-${run.id}-screenshots.zip`,
      mimetype: 'application/zip',
      direction: 'OUTPUT',
      state: 'READY',
      inputType: null,
    });
    expect(screenshots.entries.map((e) => [e.name, e.bytes, e.compressed])).toEqual([
      [`${folderA}/home.png`, PNG_A, false],
      [`${folderB}/home.png`, PNG_B, false],
    ]);

    const logs = await runZip(alice, `/api/v2/runs/${run.id}/logs.zip`);
    expect(logs.entries.map((e) => [e.name, e.bytes, e.compressed])).toEqual([
      [`${folderA}/device.log`, LOG_A, true],
      [`${folderB}/device.log`, LOG_B, true],
    ]);
    expect(logs.record.size).toBeLessThan(LOG_A.length / 10);

    const files = await runZip(alice, `/api/v2/users/${alice.user.id}/runs/${run.id}/files.zip`);
    expect(files.entries.map((e) => [e.name, e.bytes])).toEqual([
      [`${folderA}/device.log`, LOG_A],
      [`${folderA}/home.png`, PNG_A],
      [`${folderA}/report.json`, REPORT_A],
      [`${folderA}/run.mp4`, VIDEO_A],
      [`${folderB}/device.log`, LOG_B],
      [`${folderB}/home.png`, PNG_B],
    ]);

    const performance = await runZip(alice, `/api/me/runs/${run.id}/performance.zip`);
    expect(performance.entries.map((e) => [e.name, e.bytes.toString()])).toEqual([
      [
        `${folderA}/performance.csv`,
        "timestamp,cpuUsage,memUsage,packageName\r\n1000,0.25,2048,com.example\r\n2000,0.5,,'=cmd|calc\r\n",
      ],
    ]);

    // The same results make the same zip, stored once; each request is a file of its own.
    const again = await runZip(alice, `${base}/files.zip`);
    expect(again.record.id).not.toBe(files.record.id);
    expect(again.record.duplicate).toBe(true);
    expect(again.record.size).toBe(files.record.size);

    // The file answered is the user's, in XML too (the default), and listed with their files.
    const xml = await alice.call('POST', `${base}/logs.zip`);
    expect(xml.status).toBe(201);
    expect(parseXml(xml.text).apiUserFile).toMatchObject({ name: `run-${run.id}-logs.zip`, direction: 'OUTPUT' });
    const listed = await alice.call('GET', '/api/me/files?limit=0&filter=s_direction_eq_OUTPUT', { json: true });
    expect(listed.body.data.map((file: { name: string }) => file.name)).toContain(`run-${run.id}-performance.zip`);

    // Only the sessions named, in the clients' deviceRunIds[] form.
    const onlyB = await runZip(alice, `${base}/screenshots.zip?deviceRunIds[]=${b}`);
    expect(onlyB.entries.map((e) => e.name)).toEqual([`${folderB}/home.png`]);
  });

  it("streams a session's output files as a zip, all of them or by tag, under every session path", async () => {
    const { run, sessions } = await finishedRun([
      [
        ['device.log', 'log', LOG_A],
        ['home.png', 'screenshot', PNG_A],
        ['run.mp4', 'video', VIDEO_A],
      ],
      [['device.log', 'log', LOG_B]],
    ]);
    const [a, b] = sessions;
    for (const url of [
      `/api/v2/device-sessions/${a}/output-file-set/files.zip`,
      `/api/me/device-sessions/${a}/output-file-set/files.zip`,
      `/api/v2/me/projects/${projectId}/runs/${run.id}/device-sessions/${a}/output-file-set/files.zip`,
      `/api/me/projects/${projectId}/runs/${run.id}/device-runs/${a}/output-file-set/files.zip`,
      `/api/v2/runs/${run.id}/device-runs/${a}/output-file-set/files.zip`,
    ]) {
      const answer = await get(alice, url, 'application/json');
      expect(answer.statusCode, url).toBe(200);
      expect(answer.headers['content-type']).toBe('application/zip');
      expect(answer.headers['content-length']).toBeUndefined();
      expect(String(answer.headers['content-disposition'])).toContain(`device-session-${a}-output-files.zip`);
      expect((await unzip(answer.rawPayload)).map((e) => [e.name, e.bytes])).toEqual([
        ['device.log', LOG_A],
        ['home.png', PNG_A],
        ['run.mp4', VIDEO_A],
      ]);
    }
    const tagged = await get(alice, `/api/v2/device-sessions/${a}/output-file-set/files.zip?tag[]=logs&tag[]=video`);
    expect((await unzip(tagged.rawPayload)).map((e) => e.name)).toEqual(['device.log', 'run.mp4']);
    // A session of another run under this run's path, and another user's session, are 404.
    const elsewhere = await get(alice, `/api/v2/runs/${run.id + 1000}/device-runs/${a}/output-file-set/files.zip`);
    expect(elsewhere.statusCode).toBe(404);
    expect((await get(bob, `/api/v2/device-sessions/${a}/output-file-set/files.zip`)).statusCode).toBe(404);

    // One output file's record, from its own session only.
    const listed = await alice.call('GET', `/api/v2/device-sessions/${b}/output-file-set/files`, { json: true });
    const fileB = listed.body.data[0];
    const record = await alice.call('GET', `/api/v2/device-sessions/${b}/output-file-set/files/${fileB.id}`, {
      json: true,
    });
    expect(record.status).toBe(200);
    expect(record.body).toEqual(fileB);
    expect(
      (await alice.call('GET', `/api/v2/device-sessions/${a}/output-file-set/files/${fileB.id}`, { json: true }))
        .status,
    ).toBe(404);
    expect(
      (await bob.call('GET', `/api/v2/device-sessions/${b}/output-file-set/files/${fileB.id}`, { json: true })).status,
    ).toBe(404);
  });

  it('lists and zips the input files a session ran with, in the order the run named them, never a stranger’s', async () => {
    const app = await fixtures.file(h.ctx, alice.user, { name: 'app.apk', inputType: 'APPLICATION', bytes: 'APP' });
    const tests = await fixtures.file(h.ctx, alice.user, { name: 'tests.zip', inputType: 'TEST', bytes: 'TESTS' });
    const data = await fixtures.file(h.ctx, alice.user, { name: 'app.apk', inputType: 'DATA', bytes: 'DATA' });
    // An id the run names that is (now) someone else's file: never shown, never zipped.
    const strangers = await fixtures.file(h.ctx, bob.user, { name: 'bob-secret.bin', inputType: 'DATA' });
    const run = await fixtures.run(h.ctx, alice.user, projectId, [devices[0]!], ['SUCCEEDED'], {
      files: [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
        { id: strangers.id, action: 'COPY_TO_DEVICE' },
        { id: data.id, action: 'COPY_TO_DEVICE' },
      ],
    });
    const [session] = await h.ctx.store.deviceRuns.currentOfRun(run.id);
    const listed = await alice.call('GET', `/api/v2/device-sessions/${session!.id}/input-file-set/files`, {
      json: true,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((file: { id: number; name: string }) => [file.id, file.name])).toEqual([
      [app.id, 'app.apk'],
      [tests.id, 'tests.zip'],
      [data.id, 'app.apk'],
    ]);
    expect(listed.text).not.toContain('bob-secret');
    const zip = await get(
      alice,
      `/api/me/projects/${projectId}/runs/${run.id}/device-sessions/${session!.id}/input-file-set/files.zip`,
    );
    expect(zip.statusCode).toBe(200);
    expect((await unzip(zip.rawPayload)).map((e) => [e.name, e.bytes.toString()])).toEqual([
      ['app.apk', 'APP'],
      ['tests.zip', 'TESTS'],
      ['app (2).apk', 'DATA'],
    ]);
    for (const path of ['input-file-set/files', 'input-file-set/files.zip'])
      expect((await get(bob, `/api/v2/device-sessions/${session!.id}/${path}`)).statusCode).toBe(404);
  });

  it('gives hostile file names safe, unique entry names, with their bytes, in a stable order', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, [devices[1]!], ['SUCCEEDED']);
    const [session] = await h.ctx.store.deviceRuns.currentOfRun(run.id);
    const names = [
      '../../../../etc/passwd',
      '/absolute/path.txt',
      'C:\\Windows\\system.ini',
      // PostgreSQL text cannot hold NUL at all.
      engine === 'sqlite' ? 'a\u0000b.txt' : 'a\u0001b.txt',
      `${'x'.repeat(400)}.txt`,
      `${'é'.repeat(300)}.log`,
      'Report.TXT',
      'report.txt',
      'report.txt',
      '.',
      '..',
      '',
      'CON',
      'nul.txt',
      'trailing. . ',
      'new\r\nline',
      '\ud800lone.txt',
      'dir/',
      '\u202eevil.txt',
    ];
    // Straight into the store: names an older release, or another path, may have kept as they came.
    for (const [index, name] of names.entries())
      await fixtures.file(h.ctx, alice.user, {
        name,
        inputType: 'DATA',
        outputOf: session!.id,
        tags: ['output'],
        bytes: `bytes of file ${index}`,
      });
    const flat = await unzip(
      (await get(alice, `/api/v2/device-sessions/${session!.id}/output-file-set/files.zip`)).rawPayload,
    );
    const viaRun = (await runZip(alice, `/api/v2/runs/${run.id}/files.zip`)).entries;
    for (const [entries, folders] of [
      [flat, 0],
      [viaRun, 1],
    ] as const) {
      expect(entries.map((e) => e.bytes.toString())).toEqual(names.map((_, index) => `bytes of file ${index}`));
      const lower = new Set<string>();
      for (const { name } of entries) {
        const segments = name.split('/');
        expect(segments, name).toHaveLength(folders + 1);
        for (const segment of segments) {
          expect(segment, JSON.stringify(name)).not.toMatch(/^\.{0,2}$|[\\:\u0000-\u001f\u007f]|[. ]$/);
          expect(Buffer.byteLength(segment), segment).toBeLessThanOrEqual(255);
        }
        expect(lower.has(name.toLowerCase()), name).toBe(false);
        lower.add(name.toLowerCase());
      }
    }
    expect(flat.map((e) => e.name).slice(6, 9)).toEqual(['Report.TXT', 'report (2).txt', 'report (3).txt']);
    expect(flat[0]!.name).toBe('.._.._.._.._etc_passwd');
    expect(flat[12]!.name).toBe('_CON');
  });

  it('answers a valid empty zip for a run with nothing of that kind', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, [devices[0]!], ['SUCCEEDED', 'EXCLUDED']);
    const empty = await runZip(alice, `/api/v2/runs/${run.id}/screenshots.zip`);
    expect(empty.entries).toEqual([]);
    expect(empty.record.size).toBe(22);
    const [session] = await h.ctx.store.deviceRuns.currentOfRun(run.id);
    const streamed = await get(alice, `/api/v2/device-sessions/${session!.id}/output-file-set/files.zip`);
    expect(await unzip(streamed.rawPayload)).toEqual([]);
  });

  it('cuts a streamed zip when a stored file cannot be read, and keeps no run zip then', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, [devices[0]!], ['SUCCEEDED']);
    const [session] = await h.ctx.store.deviceRuns.currentOfRun(run.id);
    const readable = await fixtures.file(h.ctx, alice.user, {
      name: 'first.txt',
      inputType: 'DATA',
      outputOf: session!.id,
      tags: ['output'],
      bytes: 'x'.repeat(100_000),
    });
    // A record whose bytes are gone (a disk lost, a sweep gone wrong): no zip may look whole without them.
    const { id: _id, ...rest } = readable;
    await h.ctx.store.files.insert({ ...rest, name: 'gone.txt', blobKey: 'f'.repeat(64), sha256: 'f'.repeat(64) });
    await expect(get(alice, `/api/v2/device-sessions/${session!.id}/output-file-set/files.zip`)).rejects.toThrow(
      /destroyed before completion/,
    );
    const files = (await alice.call('GET', '/api/me/files?limit=0', { json: true })).body.total;
    const refused = await alice.call('POST', `/api/v2/runs/${run.id}/files.zip`, { json: true });
    expect(refused.status).toBe(500);
    expect(refused.body.message).not.toMatch(/ENOENT|blobs/);
    expect((await alice.call('GET', '/api/me/files?limit=0', { json: true })).body.total).toBe(files);
    expect(fs.readdirSync(path.join(h.blobDir, 'tmp'))).toEqual([]);
  });

  it('refuses a zip that would go beyond the storage quota, storing nothing', async () => {
    const { run } = await finishedRun([[['run.mp4', 'video', VIDEO_A]], []]);
    const before = await alice.call('GET', '/api/me/files?limit=0', { json: true });
    const usage = (await alice.call('GET', '/api/me', { json: true })).body.storageUsedBytes as number;
    await setStorageQuota(h.ctx, alice.user, usage + 1000);
    try {
      const refused = await alice.call('POST', `/api/v2/runs/${run.id}/files.zip`, { json: true });
      expect(refused.status).toBe(413);
      expect(refused.body.message).toMatch(/files zip of test run/);
      expect((await alice.call('GET', '/api/me/files?limit=0', { json: true })).body.total).toBe(before.body.total);
      expect((await alice.call('GET', '/api/me', { json: true })).body.storageUsedBytes).toBe(usage);
    } finally {
      await setStorageQuota(h.ctx, alice.user, null);
    }
  });

  it("keeps a run's zips to its current sessions, and other users' ids to 404", async () => {
    const { run, sessions } = await finishedRun([
      [['home.png', 'screenshot', PNG_A]],
      [['home.png', 'screenshot', PNG_B]],
    ]);
    const [a, b] = sessions;
    for (const url of [
      `/api/v2/runs/${run.id}/screenshots.zip`,
      `/api/v2/me/runs/${run.id}/logs.zip`,
      `/api/me/projects/${projectId}/runs/${run.id}/files.zip`,
      `/api/v2/users/${alice.user.id}/projects/${projectId}/runs/${run.id}/performance.zip`,
    ]) {
      const answer = await bob.call('POST', url, { json: true });
      expect(answer.status, url).toBe(404);
    }
    expect((await alice.call('POST', `/api/me/projects/${projectId + 1000}/runs/${run.id}/logs.zip`)).status).toBe(404);
    // A session of another user's, or of another run, named in deviceRunIds[]: 404.
    const bobsProject = (await bob.call('POST', '/api/me/projects', { json: true, form: { name: 'Bob' } })).body.id;
    const bobsRun = await fixtures.run(h.ctx, bob.user, bobsProject, [devices[0]!], ['SUCCEEDED']);
    const [bobsSession] = await h.ctx.store.deviceRuns.currentOfRun(bobsRun.id);
    for (const id of [bobsSession!.id, 987654]) {
      const answer = await alice.call(
        'POST',
        `/api/v2/runs/${run.id}/screenshots.zip?deviceRunIds[]=${a}&deviceRunIds[]=${id}`,
        {
          json: true,
        },
      );
      expect(answer.status).toBe(404);
      expect(answer.body.message).toContain(String(id));
    }

    // A retried session is replaced: its results leave the run's zips, and naming it is refused.
    const retried = await alice.call('POST', `/api/v2/runs/${run.id}/retry?deviceRunIds[]=${b}`, { json: true });
    expect(retried.status).toBe(200);
    const after = await runZip(alice, `/api/v2/runs/${run.id}/screenshots.zip`);
    expect(after.entries.map((e) => e.name)).toEqual([`${a}-Pixel 8/home.png`]);
    const named = await alice.call('POST', `/api/v2/runs/${run.id}/screenshots.zip?deviceRunIds[]=${b}`, {
      json: true,
    });
    expect(named.status).toBe(400);
    expect(named.body.message).toMatch(new RegExp(`Device run ${b} of test run ${run.id} was replaced by a retry`));
    // The replaced session itself keeps what it produced, readable by its own id.
    const own = await get(alice, `/api/v2/device-sessions/${b}/output-file-set/files.zip`);
    expect((await unzip(own.rawPayload)).map((e) => e.bytes)).toEqual([PNG_B]);
  });
});
