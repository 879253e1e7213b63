import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import { ENGINES } from '../support/engines.ts';
import { type Harness, type TestUser, createHarness, parseXml, upload } from '../support/harness.ts';
import { bombZip, duplicateEntryZip, manySmallBombsZip, traversalZip, zip } from '../support/zips.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-uploads-'));
let samples: Record<string, Buffer>;
beforeAll(async () => {
  const files = await buildExamples(dir, { variants: true });
  samples = Object.fromEntries(Object.entries(files).map(([name, file]) => [name, fs.readFileSync(file)]));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each(ENGINES)('uploads and downloads (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine, { limits: { maxUploadBytes: 64 * 1024 } });
    alice = await h.user();
  });
  afterEach(async () => h.close());

  const put = (name: string, content: Buffer | string, options?: { field?: string; cut?: number }) =>
    upload(h.app, alice.key, '/api/me/files', name, content, options);
  const count = async () => (await alice.call('GET', '/api/me/files?limit=0', { json: true })).body.total;

  it('parses an APK on upload and gives the same bytes back', async () => {
    const answer = await put('sample-app.apk', samples['sample-app.apk']!);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      name: 'sample-app.apk',
      size: samples['sample-app.apk']!.length,
      state: 'READY',
      direction: 'INPUT',
      inputType: 'APPLICATION',
      duplicate: false,
      mimetype: 'application/vnd.android.package-archive',
    });
    const properties = Object.fromEntries(
      answer.body.fileProperties.map((p: { key: string; value: string }) => [p.key, p.value]),
    );
    expect(properties).toMatchObject({
      package_name: 'com.devicecloud.sample',
      main_activity: 'com.devicecloud.sample.MainActivity',
      min_sdk: '24',
      virus_scan_status: 'disabled',
    });
    expect(answer.body.directUrl).toMatch(new RegExp(`/api/v2/users/${alice.user.id}/files/${answer.body.id}/file$`));

    const download = await h.app.inject({
      method: 'GET',
      url: `/api/v2/users/${alice.user.id}/files/${answer.body.id}/file`,
      headers: {
        authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}`,
        accept: 'application/json',
      },
    });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(samples['sample-app.apk']!)).toBe(true);
    expect(download.headers['content-length']).toBe(String(samples['sample-app.apk']!.length));
    expect(download.headers['content-disposition']).toContain('attachment; filename="sample-app.apk"');

    const again = await put('renamed.apk', samples['sample-app.apk']!);
    expect(again.body).toMatchObject({ duplicate: true, name: 'renamed.apk' });
    const xml = parseXml((await alice.call('GET', `/api/me/files/${answer.body.id}`)).text);
    expect(xml.apiUserFile.fileProperties.apiFileProperty[0]).toMatchObject({
      key: 'package_name',
      value: 'com.devicecloud.sample',
    });
  });

  it('recognises test APKs, iOS apps, test packages and data', async () => {
    expect((await put('tests.apk', samples['sample-app-tests.apk']!)).body.inputType).toBe('TEST');
    expect((await put('sample-app.ipa', samples['sample-app.ipa']!)).body).toMatchObject({ inputType: 'APPLICATION' });
    expect((await put('tests-green.zip', samples['tests-green.zip']!)).body.inputType).toBe('TEST');
    expect((await put('users.csv', 'id,name\n1,a\n')).body).toMatchObject({ inputType: 'DATA', mimetype: 'text/csv' });
    const tests = await alice.call('GET', '/api/me/files?filter=inputType_eq_TEST&sort=name_a', { json: true });
    expect(tests.body.data.map((f: { name: string }) => f.name)).toEqual(['tests-green.zip', 'tests.apk']);
  });

  it('refuses iOS builds that cannot be installed, and fake apps, storing nothing', async () => {
    for (const [name, reason] of [
      ['appstore.ipa', 'App Store distribution build'],
      ['simulator.ipa', 'simulator build'],
      ['no-profile.ipa', 'no embedded provisioning profile'],
      ['broken.apk', 'AndroidManifest.xml is missing'],
      ['not-a-zip.apk', 'not a valid APK'],
    ] as const) {
      const answer = await put(name, samples[name]!);
      expect(answer.status, name).toBe(400);
      expect(answer.body.message, name).toContain(reason);
    }
    expect(await count()).toBe(0);
  });

  it("refuses an IPA with a malformed plist with the parser's complaint as the 400, printing nothing raw", async () => {
    const info = (body: string) =>
      `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict>${body}</dict></plist>`;
    const good = info('<key>CFBundleIdentifier</key><string>com.example.app</string>');
    const cases: Array<[string, Array<[string, string]>, string]> = [
      [
        'unclosed.ipa',
        [['Payload/App.app/Info.plist', '<?xml version="1.0"?><plist><dict><key>a</key><string>b</string></dict>']],
        'Info.plist cannot be read: malformed XML (unclosed xml tag(s): plist)',
      ],
      [
        'mismatch.ipa',
        [['Payload/App.app/Info.plist', info('<key>a</key><string>b</strin>')]],
        'Opening and ending tag mismatch',
      ],
      ['unquoted.ipa', [['Payload/App.app/Info.plist', info('<key>a</key><string attr=x>b</string>')]], 'missed quot'],
      [
        'entity.ipa',
        [['Payload/App.app/Info.plist', info('<key>a</key><string>&unknown;</string>')]],
        'entity not found',
      ],
      [
        'profile.ipa',
        [
          ['Payload/App.app/Info.plist', good],
          ['Payload/App.app/embedded.mobileprovision', `CMS${info('<key>Name</key><string>p</strong>')}CMS`],
        ],
        'embedded.mobileprovision cannot be read: malformed XML',
      ],
    ];
    const printed: string[] = [];
    const capture =
      (stream: string) =>
      (...args: unknown[]) => {
        printed.push(`${stream}: ${args.map(String).join(' ')}`);
        return true;
      };
    const spies = [
      vi.spyOn(process.stderr, 'write').mockImplementation(capture('stderr') as never),
      vi.spyOn(process.stdout, 'write').mockImplementation(capture('stdout') as never),
      ...(['error', 'warn', 'log', 'info', 'debug'] as const).map((method) =>
        vi.spyOn(console, method).mockImplementation(capture(`console.${method}`)),
      ),
    ];
    const answers: Array<[string, number, string]> = [];
    try {
      for (const [name, entries] of cases) {
        const answer = await put(name, await zip(entries));
        answers.push([name, answer.status, answer.body.message]);
      }
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(printed).toEqual([]);
    for (const [[name, status, message], [, , expected]] of answers.map((answer, i) => [answer, cases[i]!] as const)) {
      expect(status, name).toBe(400);
      expect(message, name).toContain(expected);
    }
    expect(await count()).toBe(0);
  });

  it('refuses zips that climb out of their folder or expand like bombs', async () => {
    // The bomb needs room to look harmless: a harness with a larger upload limit.
    await h.close();
    h = await createHarness(engine, { limits: { maxUploadBytes: 10 * 1024 * 1024 } });
    alice = await h.user();
    const traversal = await put('tests.zip', await traversalZip());
    expect(traversal.status).toBe(400);
    expect(traversal.body.message).toMatch(/unsafe entry name|invalid relative path/);
    const bomb = await put('tests.zip', await bombZip());
    expect(bomb.status).toBe(400);
    expect(bomb.body.message).toContain('zip bomb');
    // A thousand entries of 1 MiB of zeros: no entry a bomb on its own, 1 GiB together.
    const smallBombs = await put('tests.zip', manySmallBombsZip(1000));
    expect(smallBombs.status).toBe(400);
    expect(smallBombs.body.message).toMatch(/expands \d+ times its size, to 1048576008 bytes \(a zip bomb\?\)/);
    expect(await count()).toBe(0);
  });

  it('refuses packages that cannot be unpacked: run-tests.sh twice, a name both a file and a folder', async () => {
    const duplicate = await put('tests.zip', await duplicateEntryZip());
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.message).toBe('tests.zip is not a safe zip file: the zip holds run-tests.sh more than once');
    const clash = await put(
      'tests.zip',
      await zip([
        ['run-tests.sh', 'x'],
        ['lib', 'x'],
        ['lib/a.sh', 'x'],
      ]),
    );
    expect(clash.status).toBe(400);
    expect(clash.body.message).toContain('lib is both a file and a folder');
    expect(await count()).toBe(0);
  });

  it('answers 413 beyond the upload limit and 400 for a cut-off upload, storing nothing', async () => {
    const big = await put('big.bin', Buffer.alloc(65 * 1024, 1));
    expect(big.status).toBe(413);
    expect(big.body.message).toContain('upload limit of 65536 bytes');
    const cut = await put('cut.bin', Buffer.alloc(4000, 2), { cut: 2000 });
    expect(cut.status).toBe(400);
    const empty = await put('empty.bin', '');
    expect(empty.status).toBe(400);
    expect(await count()).toBe(0);
  });

  it('explains malformed upload requests', async () => {
    const notMultipart = await alice.call('POST', '/api/me/files', { json: true, form: { file: 'x' } });
    expect(notMultipart.status).toBe(415);
    expect(notMultipart.body.message).toContain("part named 'file'");
    const wrongField = await put('a.txt', 'x', { field: 'upload' });
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.message).toContain("named 'upload'; name it 'file'");
  });

  it('keeps legacy per-project files in their slots', async () => {
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Legacy' } })).body.id;
    const wrongSlot = await upload(
      h.app,
      alice.key,
      `/api/me/projects/${project}/files/application`,
      'tests.zip',
      samples['tests-green.zip']!,
    );
    expect(wrongSlot.status).toBe(400);
    expect(wrongSlot.body.message).toContain('is not an application');
    const app = await upload(
      h.app,
      alice.key,
      `/api/me/projects/${project}/files/application`,
      'sample-app.apk',
      samples['sample-app.apk']!,
    );
    expect(app.status).toBe(201);
    const data = await upload(h.app, alice.key, `/api/me/projects/${project}/files/data`, 'fixtures.csv', 'a,b\n');
    expect(data.body.inputType).toBe('DATA');
    const back = await h.app.inject({
      method: 'GET',
      url: `/api/me/projects/${project}/files/application`,
      headers: { authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}` },
    });
    expect(back.rawPayload.equals(samples['sample-app.apk']!)).toBe(true);
    expect((await alice.call('GET', `/api/me/projects/${project}/files/test`)).status).toBe(404);
  });

  it("serves files so that a browser opening one cannot run what it holds, on the dashboard's origin", async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/auth/session")</script></svg>';
    const stored = await put('drawing.svg', svg);
    expect(stored.status).toBe(201);
    const download = await alice.call('GET', `/api/me/files/${stored.body.id}/file`);
    expect(download.text).toBe(svg);
    expect(download.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' });
    expect(String(download.headers['content-security-policy'])).toMatch(/default-src 'none'; sandbox/);
    // API answers too; the dashboard's page may run its own scripts, and nobody may frame it.
    expect(String((await alice.call('GET', '/api/me', { json: true })).headers['content-security-policy'])).toContain(
      'sandbox',
    );
    const page = await h.app.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(page.headers['x-frame-options']).toBe('DENY');
  });

  it('deletes files', async () => {
    const file = (await put('notes.txt', 'hello')).body;
    expect((await alice.call('DELETE', `/api/me/files/${file.id}`)).status).toBe(204);
    expect((await alice.call('GET', `/api/me/files/${file.id}`)).status).toBe(404);
    expect((await alice.call('GET', `/api/me/files/${file.id}/file`)).status).toBe(404);
  });
});
