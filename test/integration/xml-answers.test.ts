/**
 * Text that came from tests and device hosts (JUnit failure messages with ANSI colours, control
 * characters, U+FFFF, lone surrogates; device names) is stored as reported, and every answer
 * showing it still parses: the XML listings, the JUnit report, and JSON.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notStrictJson, notWellFormed } from '../support/any-text.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, call, createHarness, parseXml } from '../support/harness.ts';

const SERVER_SIDE = 7;
const NASTY = 'bell\u0007 vt\u000b \u001b[31mred\u001b[0m nc\ufffe\uffff lone\ud800 <&>]]> cr\r\nlf pair\ud83d\ude00';
// What XML shows: the characters it cannot carry as \uXXXX, a lone surrogate (no character) as U+FFFD.
const NASTY_IN_XML =
  'bell\\u0007 vt\\u000b \\u001b[31mred\\u001b[0m nc\\ufffe\\uffff lone\ufffd <&>]]> cr\r\nlf pair\ud83d\ude00';

describe.each(ENGINES)('answers showing text from tests (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    alice = await h.user({ plan: 'GOLD' });
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', `Pixel \u001b[1m8\u0001`)]);
    await agent.cleanAll();
  });
  afterEach(async () => h.close());

  it('stores a JUnit failure as reported and answers it in well-formed XML, JSON and junit.xml', async () => {
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
        projectName: 'P',
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
      },
    });
    expect(started.status, started.text).toBe(201);
    const { assignments } = await agent.claim(['a1']);
    const deviceRunId = assignments[0]!.deviceRunId;
    const failed = {
      suiteName: `Suite\u0002`,
      className: `com.example.T\u001b`,
      methodName: `test\uffff`,
      duration: 3,
      result: 'FAILED',
      errorMessage: NASTY,
      stacktrace: `${NASTY}\n\tat com.example.T nul\u0000`,
    };
    const reported = await agent.post(`/device-runs/${deviceRunId}/result`, {
      seq: 1,
      outcome: 'FAILED',
      failReason: `\u001b[31mboom\u0000`,
      testCases: [failed],
    });
    expect(reported.status, reported.text).toBe(200);

    const base = `/api/me/projects/${started.body.projectId}/runs/${started.body.id}/device-sessions/${deviceRunId}`;
    const xml = await alice.call('GET', `${base}/test-case-runs`);
    expect(xml.headers['content-type']).toMatch(/^application\/xml/);
    expect(notWellFormed(xml.text)).toBeNull();
    const row = parseXml(xml.text).apiList.data.apiTestCaseRun[0];
    expect(row).toMatchObject({
      errorMessage: NASTY_IN_XML,
      className: 'com.example.T\\u001b',
      methodName: 'test\\uffff',
      suiteName: 'Suite\\u0002',
    });

    const json = await alice.call('GET', `${base}/test-case-runs`, { json: true });
    expect(notStrictJson(json.text)).toBeNull();
    // JSON carries every character; only the lone surrogate, which is none, is U+FFFD.
    expect(json.body.data[0].errorMessage).toBe(NASTY.replace('\ud800', '\ufffd'));
    // NUL, which PostgreSQL text cannot hold, was stored as U+FFFD (on both engines).
    expect(json.body.data[0].stacktrace).toMatch(/at com\.example\.T nul\ufffd$/);

    const junit = await alice.call(
      'GET',
      `/api/me/projects/${started.body.projectId}/runs/${started.body.id}/device-runs/${deviceRunId}/junit.xml`,
    );
    expect(junit.status).toBe(200);
    expect(notWellFormed(junit.text)).toBeNull();

    // The device's name (from its host) and the run's fail reason, wherever they are shown.
    for (const url of [
      `${base}`,
      `/api/me/projects/${started.body.projectId}/runs/${started.body.id}?withDeviceRuns=true`,
      `/api/me/projects/${started.body.projectId}/runs/${started.body.id}/device-runs`,
      `${base}/steps`,
    ]) {
      const answer = await alice.call('GET', url);
      expect(answer.status, url).toBe(200);
      expect(notWellFormed(answer.text), url).toBeNull();
    }
    const devices = await call(h.app, 'GET', '/api/v2/devices');
    expect(notWellFormed(devices.text)).toBeNull();
    expect(parseXml(devices.text).apiList.data.apiDevice[0].displayName).toBe('Pixel \\u001b[1m8\\u0001');
  });
});
