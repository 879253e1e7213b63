/**
 * Renaming a test run (`POST …/runs/{id}`, the Java client's `APITestRun.update()`) and a file
 * (`POST /me/files/{id}`), under every alias, in JSON and XML; bad values are a 400 naming the
 * parameter, and another user's run or file is a 404 that changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../../src/domain/devices.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

describe.each(ENGINES)('renaming runs and files (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let device: Device;
  let projectId: number;
  let runId: number;

  beforeAll(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    bob = await h.user();
    device = await fixtures.device(h.ctx, 'Pixel 8');
    projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Alpha' } })).body.id;
    runId = (await fixtures.run(h.ctx, alice.user, projectId, [device], ['SUCCEEDED'])).id;
  });
  afterAll(async () => h?.close());

  const runPath = () => `/api/v2/me/projects/${projectId}/runs/${runId}`;

  it("renames a run with the Java client's displayName, and answers the run", async () => {
    const answer = await alice.call('POST', runPath(), { json: true, form: { displayName: '  Nightly build 42 ' } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ id: runId, displayName: 'Nightly build 42', projectId, state: 'FINISHED' });
    const read = await alice.call('GET', runPath(), { json: true });
    expect(read.body.displayName).toBe('Nightly build 42');
    // The new name is what lists filter and search on, and what its device sessions carry.
    const listed = await alice.call('GET', `/api/v2/me/runs?filter=s_displayName_eq_Nightly build 42`, { json: true });
    expect(listed.body.data.map((run: { id: number }) => run.id)).toEqual([runId]);
    const sessions = await alice.call('GET', `${runPath()}/device-sessions`, { json: true });
    expect(sessions.body.data[0].testRunName).toBe('Nightly build 42');
  });

  it('renames under every alias, with name as well as displayName, in JSON bodies and XML answers', async () => {
    const viaRuns = await alice.call('POST', `/api/me/runs/${runId}`, { json: true, body: { name: 'Via runs' } });
    expect(viaRuns.status, viaRuns.text).toBe(200);
    expect(viaRuns.body.displayName).toBe('Via runs');
    const viaTop = await alice.call('POST', `/api/runs/${runId}`, { form: { displayName: 'Top <level> & co' } });
    expect(viaTop.status, viaTop.text).toBe(200);
    expect(parseXml(viaTop.text).apiTestRun.displayName).toBe('Top <level> & co');
    const viaUser = await alice.call('POST', `/api/v2/users/${alice.user.id}/projects/${projectId}/runs/${runId}`, {
      json: true,
      form: { displayName: 'Via users' },
    });
    expect(viaUser.body.displayName).toBe('Via users');
  });

  it('gives a run its default name back for an empty one, and leaves it be when nothing is sent', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, [device], ['WAITING'], { name: 'Named' });
    const path = `/api/v2/me/runs/${run.id}`;
    const unchanged = await alice.call('POST', path, { json: true, form: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.displayName).toBe('Named');
    const cleared = await alice.call('POST', path, { json: true, form: { displayName: '   ' } });
    expect(cleared.body.displayName).toBe(`Test Run ${run.number}`);
  });

  it('refuses bad names with a 400 naming the parameter, in the negotiated format', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ displayName: 'x'.repeat(256) }, 'displayName'],
      [{ displayName: 'bell\u0007' }, 'displayName'],
      [{ name: 'x'.repeat(300) }, 'name'],
      [{ displayName: 'One', name: 'Two' }, 'displayName'],
    ];
    const before = (await alice.call('GET', runPath(), { json: true })).body.displayName;
    for (const [form, parameter] of cases) {
      const answer = await alice.call('POST', runPath(), { json: true, form });
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.message).toContain(parameter);
    }
    const xml = await alice.call('POST', runPath(), { form: { displayName: 'x'.repeat(256) } });
    expect(xml.status).toBe(400);
    expect(parseXml(xml.text).apiExceptionMessage.message).toContain('displayName');
    expect((await alice.call('GET', runPath(), { json: true })).body.displayName).toBe(before);
  });

  it("answers 404 for another user's run, under every alias, and renames nothing", async () => {
    const before = (await alice.call('GET', runPath(), { json: true })).body.displayName;
    for (const path of [
      runPath(),
      `/api/v2/me/runs/${runId}`,
      `/api/runs/${runId}`,
      `/api/v2/users/${bob.user.id}/runs/${runId}`,
    ]) {
      const answer = await bob.call('POST', path, { json: true, form: { displayName: 'Hijacked' } });
      expect(answer.status, path).toBe(404);
      expect(answer.text).not.toContain(before);
    }
    // Another user's run inside one's own project path is not found either.
    const bobsProject = (await bob.call('POST', '/api/me/projects', { json: true, form: { name: 'B' } })).body.id;
    const crossed = await bob.call('POST', `/api/v2/me/projects/${bobsProject}/runs/${runId}`, {
      json: true,
      form: { displayName: 'Hijacked' },
    });
    expect(crossed.status).toBe(404);
    // The owner's run in another of their projects' path is not found.
    const other = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Other' } })).body.id;
    const misplaced = await alice.call('POST', `/api/v2/me/projects/${other}/runs/${runId}`, {
      json: true,
      form: { displayName: 'Misplaced' },
    });
    expect(misplaced.status).toBe(404);
    expect((await alice.call('GET', runPath(), { json: true })).body.displayName).toBe(before);
  });

  it('renames a file, keeping its extension, and answers the file; the bytes stay the same', async () => {
    const file = await fixtures.file(h.ctx, alice.user, { name: 'app.apk', inputType: 'APPLICATION', bytes: 'APK!' });
    const answer = await alice.call('POST', `/api/v2/me/files/${file.id}`, {
      json: true,
      form: { name: ' release-1.2.APK ' },
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ id: file.id, name: 'release-1.2.APK', size: 4, inputType: 'APPLICATION' });
    expect((await alice.call('GET', `/api/v2/files/${file.id}`, { json: true })).body.name).toBe('release-1.2.APK');
    const listed = await alice.call('GET', '/api/v2/me/files?search=release-1.2', { json: true });
    expect(listed.body.data.map((item: { id: number }) => item.id)).toEqual([file.id]);
    const download = await alice.call('GET', `/api/v2/me/files/${file.id}/file`);
    expect(download.text).toBe('APK!');
    expect(String(download.headers['content-disposition'])).toContain('release-1.2.APK');
    const viaTop = await alice.call('POST', `/api/files/${file.id}`, { form: { name: 'final.apk' } });
    expect(viaTop.status).toBe(200);
    expect(parseXml(viaTop.text).apiUserFile.name).toBe('final.apk');
  });

  it('refuses a file name without the extension, with a path, or empty, naming the parameter', async () => {
    const file = await fixtures.file(h.ctx, alice.user, { name: 'tests.zip', inputType: 'TEST' });
    const bare = await fixtures.file(h.ctx, alice.user, { name: 'Makefile', inputType: 'DATA' });
    const cases: Array<[number, Record<string, string>, string]> = [
      [file.id, { name: 'tests.apk' }, "extension '.zip'"],
      [file.id, { name: 'tests' }, "extension '.zip'"],
      [file.id, { name: '../../etc/tests.zip' }, 'plain file name'],
      [file.id, { name: 'a"b.zip' }, 'plain file name'],
      [file.id, { name: '   ' }, 'must not be empty'],
      [file.id, {}, 'required'],
      [file.id, { name: `${'x'.repeat(300)}.zip` }, 'at most 255'],
      [bare.id, { name: 'Makefile.txt' }, 'without an extension'],
    ];
    for (const [id, form, message] of cases) {
      const answer = await alice.call('POST', `/api/v2/me/files/${id}`, { json: true, form });
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.message).toContain("'name'");
      expect(answer.body.message).toContain(message);
    }
    expect((await alice.call('GET', `/api/v2/me/files/${file.id}`, { json: true })).body.name).toBe('tests.zip');
    const renamed = await alice.call('POST', `/api/v2/me/files/${bare.id}`, {
      json: true,
      form: { name: 'GNUmakefile' },
    });
    expect(renamed.body.name).toBe('GNUmakefile');
  });

  it("answers 404 for another user's file, and renames nothing", async () => {
    const file = await fixtures.file(h.ctx, alice.user, { name: 'secret-app.apk', inputType: 'APPLICATION' });
    for (const path of [`/api/v2/me/files/${file.id}`, `/api/files/${file.id}`]) {
      const answer = await bob.call('POST', path, { json: true, form: { name: 'mine.apk' } });
      expect(answer.status, path).toBe(404);
      expect(answer.text).not.toContain('secret-app');
      // Bad input on someone else's file is still a 404: it tells nothing about the file.
      expect((await bob.call('POST', path, { json: true, form: { name: 'x.exe' } })).status).toBe(404);
    }
    expect((await alice.call('GET', `/api/v2/me/files/${file.id}`, { json: true })).body.name).toBe('secret-app.apk');
  });
});
