/**
 * The retention job, on both engines, by moving the harness clock: archiving strategies on every
 * flavour, unused projects on the public cloud, and the bytes of whatever went.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Device } from '../../src/domain/devices.ts';
import type { Flavour } from '../../src/domain/flavours.ts';
import { applyRetention } from '../../src/jobs/retention.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const DAY = 24 * 60 * 60 * 1000;

describe.each(ENGINES)('retention (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let devices: Device[];
  const log: string[] = [];
  afterEach(async () => {
    log.length = 0;
    await h.close();
  });

  async function cloud(flavour: Flavour) {
    h = await createHarness(engine, { flavour });
    // Blob ages are the file system's: the clock starts at the real time so the two agree.
    h.setTime(Date.now());
    alice = await h.user();
    devices = [await fixtures.device(h.ctx, 'Pixel')];
  }

  const retain = () => applyRetention(h.ctx, (line) => log.push(line));
  const project = async (name: string, strategy?: { archivingStrategy: string; archivingItemCount: string }) => {
    const created = await alice.call('POST', '/api/me/projects', { json: true, form: { name } });
    if (strategy !== undefined)
      expect(
        (await alice.call('POST', `/api/me/projects/${created.body.id}`, { json: true, form: strategy })).status,
      ).toBe(200);
    return created.body.id as number;
  };
  const finishedRun = async (projectId: number, name: string) => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices, ['SUCCEEDED'], { name });
    const [deviceRun] = await h.ctx.store.deviceRuns.ofRuns([run.id]);
    const artifact = await fixtures.file(h.ctx, alice.user, {
      name: `${name}.log`,
      inputType: 'DATA',
      bytes: `log of ${name}`,
      outputOf: deviceRun!.id,
    });
    return { id: run.id, blob: artifact.blobKey };
  };
  const exists = async (url: string) => (await alice.call('GET', url, { json: true })).status === 200;
  const blobExists = async (key: string) => (await h.ctx.blobs.size(key)) !== undefined;

  it('archives finished runs older than the DAYS kept, with their results and bytes, and only those', async () => {
    await cloud('private');
    const days = await project('Days', { archivingStrategy: 'DAYS', archivingItemCount: '30' });
    const never = await project('Never', { archivingStrategy: 'NEVER', archivingItemCount: '1' });
    const old = await finishedRun(days, 'old');
    const oldKept = await finishedRun(never, 'old-kept');
    const unfinished = await fixtures.run(h.ctx, alice.user, days, devices, ['RUNNING']);
    h.advance(31 * DAY);
    const recent = await finishedRun(days, 'recent');
    const report = await retain();
    expect(report).toMatchObject({ archivedRuns: 1, removedBlobs: 1 });
    expect(await exists(`/api/v2/runs/${old.id}`)).toBe(false);
    expect(await blobExists(old.blob)).toBe(false);
    for (const kept of [recent.id, oldKept.id, unfinished.id]) expect(await exists(`/api/v2/runs/${kept}`)).toBe(true);
    expect(await blobExists(recent.blob)).toBe(true);
    expect(log.join('\n')).toContain(`run ${old.id} of project ${days}`);
    expect(await retain()).toMatchObject({ archivedRuns: 0, removedBlobs: 0 });
  });

  it('keeps the newest RUNS of a project, never an unfinished one', async () => {
    await cloud('enterprise');
    const runs = await project('Runs', { archivingStrategy: 'RUNS', archivingItemCount: '2' });
    const made = [];
    for (const name of ['r1', 'r2', 'r3', 'r4']) {
      made.push(await finishedRun(runs, name));
      h.advance(1000);
    }
    const waiting = await fixtures.run(h.ctx, alice.user, runs, devices, ['WAITING']);
    h.advance(2 * 60 * 60 * 1000);
    expect(await retain()).toMatchObject({ archivedRuns: 3 });
    const left = await alice.call('GET', `/api/me/projects/${runs}/runs`, { json: true });
    expect(left.body.data.map((run: { id: number }) => run.id)).toEqual([waiting.id, made[3]!.id]);
  });

  it('on the public cloud, empties projects unused for three months and removes them three months later', async () => {
    await cloud('public');
    const unused = await project('Unused');
    const used = await project('Used');
    const upload = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      bytes: 'apk',
      project: { id: unused, slot: 'application' },
    });
    await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      bytes: 'apk 2',
      project: { id: used, slot: 'application' },
    });
    await finishedRun(used, 'ran');
    h.advance(89 * DAY);
    expect(await retain()).toMatchObject({ emptiedProjects: 0, removedProjects: 0 });
    h.advance(2 * DAY);
    expect(await retain()).toMatchObject({ emptiedProjects: 1, removedFiles: 1, removedProjects: 0, removedBlobs: 1 });
    expect(await blobExists(upload.blobKey)).toBe(false);
    const emptied = await alice.call('GET', `/api/me/projects/${unused}`, { json: true });
    expect(emptied.status).toBe(200);
    expect(emptied.body.archiveTime).toBe(h.ctx.clock());
    expect(await exists(`/api/me/projects/${unused}/files/application`)).toBe(false);
    expect(await exists(`/api/me/projects/${used}/files/application`)).toBe(true);
    expect(log.join('\n')).toContain(`project ${unused} (1 file(s))`);
    h.advance(89 * DAY);
    expect(await retain()).toMatchObject({ removedProjects: 0 });
    h.advance(2 * DAY);
    expect(await retain()).toMatchObject({ removedProjects: 1 });
    expect(await exists(`/api/me/projects/${unused}`)).toBe(false);
    expect(await exists(`/api/me/projects/${used}`)).toBe(true);
  });

  it('leaves unused projects alone on private clouds, and spares blobs written within the hour', async () => {
    await cloud('private');
    const unused = await project('Unused');
    await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      bytes: 'apk',
      project: { id: unused, slot: 'application' },
    });
    const orphan = await h.ctx.blobs.putFile(__filename);
    h.advance(400 * DAY);
    const report = await retain();
    expect(report).toMatchObject({ emptiedProjects: 0, removedProjects: 0, removedBlobs: 1 });
    expect(await exists(`/api/me/projects/${unused}/files/application`)).toBe(true);
    expect(await blobExists(orphan.key)).toBe(false);
    // A blob whose record is not written yet (an upload in flight) is young: left alone.
    const young = await h.ctx.blobs.putFile(path.join(__dirname, '..', 'support', 'fixtures.ts'));
    h.setTime(Date.now());
    expect((await retain()).removedBlobs).toBe(0);
    expect(await blobExists(young.key)).toBe(true);
  });

  it("removes an interactive session's frame once it ended, and its device log liveLogRetentionMs after", async () => {
    await cloud('private');
    const projectId = await project('Interactive sessions');
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices, ['RUNNING', 'SUCCEEDED']);
    const [running, ended] = await h.ctx.store.deviceRuns.ofRuns([run.id]);
    const live = h.ctx.store.liveFrames;
    for (const session of [running!, ended!]) {
      await live.put(session.id, 'image/png', Buffer.from(`frame of ${session.id}`), h.ctx.clock(), h.ctx.clock());
      await live.appendLines(session.id, ['I/Input: tap 1,2', 'I/Input: tap 3,4']);
    }
    const settings = { liveLogRetentionMs: DAY };
    const retainLive = () => applyRetention(h.ctx, (line) => log.push(line), settings);
    const lines = async (id: number) => (await live.linesAfter(id, 0)).lines.length;

    h.advance(1000);
    expect(await retainLive()).toMatchObject({ removedLiveFrames: 1, removedLiveLogLines: 0 });
    expect(await live.newest(ended!.id)).toBeUndefined();
    expect((await live.newest(running!.id))?.bytes.toString()).toBe(`frame of ${running!.id}`);
    expect([await lines(ended!.id), await lines(running!.id)]).toEqual([2, 2]);
    expect(log.join('\n')).toContain('removed the last frame of 1 ended interactive session(s)');

    h.advance(DAY - 1000);
    expect(await retainLive()).toMatchObject({ removedLiveFrames: 0, removedLiveLogLines: 0 });
    h.advance(1000);
    expect(await retainLive()).toMatchObject({ removedLiveFrames: 0, removedLiveLogLines: 2 });
    expect([await lines(ended!.id), await lines(running!.id)]).toEqual([0, 2]);
    // A running session keeps both however long it runs.
    h.advance(400 * DAY);
    expect(await retainLive()).toMatchObject({ removedLiveFrames: 0, removedLiveLogLines: 0 });
    expect(await live.newest(running!.id)).toBeDefined();
  });
});
