/**
 * Videos of device sessions (docs/api.md#videos), on both engines: a run records unless its
 * config or its project's says not to, and the agent is told so; the video an agent uploads is an
 * output file with a video type, linked from the session as `video`, played in place and served in
 * ranges; a session without one has no link; another user's video is a 404.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_PREFIX } from '../../src/protocol/v1.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

const SERVER_SIDE = 7;

/** A real, short H.264 video, as the virtual driver makes them. */
function sampleVideo(): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-video-'));
  const file = path.join(dir, 'video.mp4');
  execFileSync('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=160x320:rate=5:duration=2'],
    ...['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', file],
  ]);
  const bytes = fs.readFileSync(file);
  fs.rmSync(dir, { recursive: true, force: true });
  return bytes;
}

describe.each(ENGINES)('videos of device sessions (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let agent: FakeAgent;
  let video: Buffer;
  const serial = `video-${engine}`;

  beforeAll(async () => {
    video = sampleVideo();
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    alice = await h.user();
    bob = await h.user();
    agent = await fakeAgent(h.app, h.ctx, `videos-${engine}`);
    await agent.hello([androidDevice(serial, 'Pixel 8')]);
    await agent.cleanAll();
  }, 60_000);
  afterAll(async () => h?.close());

  const auth = (user: TestUser) => ({ authorization: `Basic ${Buffer.from(`${user.key}:`).toString('base64')}` });

  /** Starts a run on the agent's device with `extra` config; answers the run and its claimed assignment. */
  async function start(projectId: number, extra: Record<string, unknown> = {}) {
    const app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
    const tests = await fixtures.file(h.ctx, alice.user, {
      name: 'tests.zip',
      inputType: 'TEST',
      properties: { entry_script: 'run-tests.sh' },
    });
    const started = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: {
        osType: 'ANDROID',
        frameworkId: SERVER_SIDE,
        projectId,
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
        deviceIds: [agent.deviceIds.get(serial)!],
        ...extra,
      },
    });
    expect(started.status, started.text).toBe(201);
    const { assignments } = await agent.claim([serial]);
    expect(assignments).toHaveLength(1);
    return {
      run: started.body as { id: number },
      assignment: assignments[0]! as { deviceRunId: number; video?: boolean },
    };
  }

  async function finish(deviceRunId: number, artifacts: Array<[string, string, Buffer]>) {
    for (const [name, kind, bytes] of artifacts) {
      const answer = await h.app.inject({
        method: 'PUT',
        url: `${PROTOCOL_PREFIX}/device-runs/${deviceRunId}/artifacts?name=${name}&kind=${kind}`,
        payload: bytes,
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/octet-stream' },
      });
      expect(answer.statusCode, answer.body).toBe(201);
    }
    expect((await agent.finish(deviceRunId, 'SUCCEEDED')).status).toBe(200);
    await agent.cleanAll();
  }

  const project = async (name: string) =>
    (await alice.call('POST', '/api/me/projects', { json: true, form: { name } })).body.id as number;

  it('records by default: the agent is told to, and the session links its video, played in place', async () => {
    const projectId = await project(`Videos on ${engine}`);
    const config = await alice.call('GET', `/api/v2/me/projects/${projectId}/config`, { json: true });
    expect(config.body.videoRecordingEnabled).toBe(true);
    const { run, assignment } = await start(projectId);
    expect(assignment.video).toBe(true);
    await finish(assignment.deviceRunId, [
      ['test.log', 'log', Buffer.from('ok\n')],
      ['video.mp4', 'video', video],
    ]);
    const runConfig = await alice.call('GET', `/api/v2/me/projects/${projectId}/runs/${run.id}/config`, { json: true });
    expect(runConfig.body.videoRecordingEnabled).toBe(true);

    const session = await alice.call('GET', `/api/v2/me/device-sessions/${assignment.deviceRunId}`, { json: true });
    const files = await alice.call(
      'GET',
      `/api/v2/me/device-sessions/${assignment.deviceRunId}/output-file-set/files?tag[]=video`,
      { json: true },
    );
    expect(files.body.data).toHaveLength(1);
    expect(files.body.data[0]).toMatchObject({ name: 'video.mp4', mimetype: 'video/mp4', size: video.length });
    const fileId = files.body.data[0].id as number;
    expect(session.body.video).toMatch(
      new RegExp(`/api/v2/device-sessions/${assignment.deviceRunId}/output-file-set/files/${fileId}/file$`),
    );
    const url = new URL(session.body.video as string).pathname;
    const whole = await h.app.inject({ method: 'GET', url, headers: auth(alice) });
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe('video/mp4');
    expect(whole.headers['content-disposition']).toMatch(/^inline/);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.rawPayload.equals(video)).toBe(true);

    // The session in XML says the same.
    const xml = await alice.call('GET', `/api/v2/me/device-sessions/${assignment.deviceRunId}`);
    expect(parseXml(xml.text)).toMatchObject({ apiDeviceSession: { video: session.body.video } });
  });

  it('serves a video in ranges, as players seek, and refuses a range past its end', async () => {
    const projectId = await project(`Ranges on ${engine}`);
    const { assignment } = await start(projectId);
    await finish(assignment.deviceRunId, [['video.mp4', 'video', video]]);
    const session = await alice.call('GET', `/api/v2/me/device-sessions/${assignment.deviceRunId}`, { json: true });
    const url = new URL(session.body.video as string).pathname;
    const ranged = (range: string) => h.app.inject({ method: 'GET', url, headers: { ...auth(alice), range } });

    const middle = await ranged('bytes=100-1099');
    expect(middle.statusCode).toBe(206);
    expect(middle.headers['content-range']).toBe(`bytes 100-1099/${video.length}`);
    expect(middle.headers['content-length']).toBe('1000');
    expect(middle.rawPayload.equals(video.subarray(100, 1100))).toBe(true);

    const open = await ranged(`bytes=${video.length - 10}-`);
    expect(open.statusCode).toBe(206);
    expect(open.rawPayload.equals(video.subarray(video.length - 10))).toBe(true);
    const suffix = await ranged('bytes=-25');
    expect(suffix.rawPayload.equals(video.subarray(video.length - 25))).toBe(true);
    const beyond = await ranged(`bytes=0-${video.length + 500}`);
    expect(beyond.statusCode).toBe(206);
    expect(beyond.rawPayload.equals(video)).toBe(true);
    // A range past the end is refused with the file's length (docs/api.md#files).
    const past = await ranged(`bytes=${video.length}-`);
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${video.length}`);

    // Another user's video is not there, whatever the range.
    const stranger = await h.app.inject({ method: 'GET', url, headers: { ...auth(bob), range: 'bytes=0-9' } });
    expect(stranger.statusCode).toBe(404);
    const strangers = await bob.call('GET', `/api/v2/me/device-sessions/${assignment.deviceRunId}`, { json: true });
    expect(strangers.status).toBe(404);
  });

  it('records nothing when the run config says so, and the session has no video', async () => {
    const projectId = await project(`No video on ${engine}`);
    const { run, assignment } = await start(projectId, { videoRecordingEnabled: false });
    expect(assignment.video).toBe(false);
    await finish(assignment.deviceRunId, [['test.log', 'log', Buffer.from('ok\n')]]);
    const session = await alice.call('GET', `/api/v2/me/device-sessions/${assignment.deviceRunId}`, { json: true });
    expect(session.body.video).toBeNull();
    const files = await alice.call(
      'GET',
      `/api/v2/me/device-sessions/${assignment.deviceRunId}/output-file-set/files?tag[]=video`,
      { json: true },
    );
    expect(files.body.data).toEqual([]);
    const runConfig = await alice.call('GET', `/api/v2/me/projects/${projectId}/runs/${run.id}/config`, { json: true });
    expect(runConfig.body.videoRecordingEnabled).toBe(false);
  });

  it("follows the project's setting when the run config leaves it out, the run config first", async () => {
    const projectId = await project(`Project says no on ${engine}`);
    const set = await alice.call('POST', `/api/v2/me/projects/${projectId}/config`, {
      json: true,
      form: { videoRecordingEnabled: 'false' },
    });
    expect(set.status, set.text).toBe(201);
    expect(set.body.videoRecordingEnabled).toBe(false);
    const off = await start(projectId);
    expect(off.assignment.video).toBe(false);
    await finish(off.assignment.deviceRunId, []);
    const on = await start(projectId, { videoRecordingEnabled: true });
    expect(on.assignment.video).toBe(true);
    await finish(on.assignment.deviceRunId, []);
  });

  it('refuses a videoRecordingEnabled that is not a boolean, naming it', async () => {
    const projectId = await project(`Bad video on ${engine}`);
    const answer = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectId, videoRecordingEnabled: 'sometimes' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('videoRecordingEnabled');
  });
});
