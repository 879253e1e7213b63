/**
 * Uploaded (and agent-sent) file names cannot place bytes outside the blob directory: hostile
 * names are stored as plain names, their bytes only under content-addressed keys.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_PREFIX } from '../../src/protocol/v1.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, createHarness, multipart, parseXml } from '../support/harness.ts';
import { snapshotter } from '../support/snapshot.ts';
import { type World, seedWorld } from '../support/world.ts';

const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });

describe.each(ENGINES)('uploads and the blob directory (%s)', (engine) => {
  let h: Harness;
  let owner: World;
  let agent: FakeAgent;
  beforeAll(async () => {
    h = await createHarness(engine);
    owner = await seedWorld(h);
    agent = await fakeAgent(h.app, h.ctx, `blobs-${engine}`);
    await agent.hello([androidDevice(`blobs-${engine}`)]);
    await agent.cleanAll();
  });
  afterAll(async () => h?.close());

  const HOSTILE_NAMES = [
    '../../../../../../tmp/devicecloud-escape.txt',
    '..\\..\\..\\windows\\escape.txt',
    '/etc/devicecloud-escape',
    '/',
    '..',
    'a\u0000b.txt',
    'new\r\nline: injected.txt',
    '\u0001\u001b[31mred.txt',
    `${'long'.repeat(1000)}.txt`,
    `${'é'.repeat(300)}.txt`,
    'semi;colon"quote.txt',
  ];

  /** Every file under `root`, as paths relative to it. */
  const filesUnder = (root: string) =>
    (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
      .filter((entry) => !entry.isDirectory())
      .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));

  it('stores hostile upload and artifact names as plain names, their bytes only under content-addressed keys', async () => {
    const outside = path.dirname(h.blobDir);
    const before = new Set(fs.readdirSync(outside));
    const stored: Array<{ name: string; id: number; from: string }> = [];
    for (const [index, name] of HOSTILE_NAMES.entries()) {
      for (const url of ['/api/me/files', `/api/me/projects/${owner.ids.projectId}/files/data`]) {
        const { body, headers } = multipart(name, `bytes ${index} for ${url}`);
        const answer = await h.app.inject({
          method: 'POST',
          url,
          payload: body,
          headers: { ...headers, ...basic(owner.user.key), accept: 'application/json' },
        });
        expect(answer.statusCode, `${url} ${JSON.stringify(name)}: ${answer.body}`).toBe(201);
        stored.push({ ...(JSON.parse(answer.body) as { name: string; id: number }), from: name });
      }
    }
    // An agent's artifacts are named by what the test package wrote: as hostile as any upload.
    const deviceId = agent.deviceIds.get(`blobs-${engine}`)!;
    const device = (await h.ctx.store.devices.byIds([deviceId])).get(deviceId)!;
    await fixtures.run(h.ctx, owner.user.user, owner.ids.projectId, [device], ['WAITING']);
    const [assignment] = (await agent.claim([`blobs-${engine}`])).assignments;
    for (const [index, name] of HOSTILE_NAMES.entries()) {
      const answer = await h.app.inject({
        method: 'PUT',
        url: `${PROTOCOL_PREFIX}/device-runs/${assignment!.deviceRunId}/artifacts?name=${encodeURIComponent(name.slice(0, 255))}&kind=output`,
        payload: `artifact ${index}`,
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/octet-stream' },
      });
      expect(answer.statusCode, `artifact ${JSON.stringify(name)}: ${answer.body}`).toBe(201);
    }

    // Nothing new beside the blob directory, and inside it only content-addressed files.
    expect(fs.readdirSync(outside).filter((entry) => !before.has(entry))).toEqual([]);
    expect(fs.existsSync('/tmp/devicecloud-escape.txt') || fs.existsSync('/etc/devicecloud-escape')).toBe(false);
    for (const file of filesUnder(h.blobDir)) expect(file).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/);

    // The names kept are names, not paths, and carry nothing XML or a header cannot hold.
    const outputs = await h.app.inject({
      method: 'GET',
      url: `/api/v2/device-sessions/${assignment!.deviceRunId}/output-file-set/files?limit=0`,
      headers: basic(owner.user.key),
    });
    expect(outputs.statusCode).toBe(200);
    const artifactNames: string[] = parseXml(outputs.body).apiList.data.apiUserFile.map(
      (file: { name: string }) => file.name,
    );
    // Names that clean to the same one ('/', '..' → 'file') replace each other, as a retried artifact does.
    expect(artifactNames.length).toBeGreaterThan(HOSTILE_NAMES.length / 2);
    for (const name of [...stored.map((file) => file.name), ...artifactNames]) {
      expect(name, JSON.stringify(name)).not.toMatch(/[/\\\u0000-\u001f]/);
      expect(['', '.', '..']).not.toContain(name);
      expect(Buffer.byteLength(name), name).toBeLessThanOrEqual(1024);
    }
    for (const file of stored) {
      const download = await h.app.inject({
        method: 'GET',
        url: `/api/me/files/${file.id}/file`,
        headers: basic(owner.user.key),
      });
      expect(download.statusCode).toBe(200);
      expect(String(download.headers['content-disposition'])).not.toMatch(/[\r\n]/);
      expect(download.body).toMatch(/^bytes \d+ for /);
    }
  });

  it("refuses an upload to a project that is not the caller's without storing a byte", async () => {
    const stranger = await seedWorld(h);
    const snapshot = await snapshotter(h.database, h.blobDir);
    const before = await snapshot();
    const { body, headers } = multipart('x.bin', 'stranger bytes');
    const answer = await h.app.inject({
      method: 'POST',
      url: `/api/me/projects/${owner.ids.projectId}/files/data`,
      payload: body,
      headers: { ...headers, ...basic(stranger.user.key) },
    });
    expect(answer.statusCode).toBe(404);
    expect(await snapshot()).toEqual(before);
  });
});
