/**
 * Flaky tests (docs/api.md#flaky-tests): a test that both passed and failed on the same app build
 * (same SHA-256, whatever the upload) is named with its history; one that only failed on another
 * build is not. Owner-only: a foreign project is a 404.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CRAWLER, protocolWorld, startRun } from '../support/agent-protocol.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import type { Harness, TestUser } from '../support/harness.ts';

type Outcomes = Partial<Record<'a1' | 'a2', ReturnType<typeof testCase>[]>>;

describe.each(ENGINES)('flaky tests (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };

  beforeEach(async () => {
    ({ h, alice, agent, app } = await protocolWorld(engine));
  });
  afterEach(async () => h.close());

  /** A finished run of `appId` whose sessions report the given test cases. */
  async function run(appId: number, outcomes: Outcomes) {
    const serials = Object.keys(outcomes) as Array<keyof Outcomes>;
    const started = await startRun(alice, {
      frameworkId: CRAWLER,
      projectName: 'P',
      files: [{ id: appId }],
      deviceIds: serials.map((serial) => agent.deviceIds.get(serial)),
    });
    const { assignments } = await agent.claim(serials);
    const sessions = new Map<string, number>();
    for (const assignment of assignments as Array<{ deviceRunId: number; deviceId: number }>) {
      const serial = serials.find((s) => agent.deviceIds.get(s) === assignment.deviceId)!;
      sessions.set(serial, assignment.deviceRunId);
      const cases = outcomes[serial]!;
      await agent.finish(
        assignment.deviceRunId,
        cases.some((c) => c.result === 'FAILED') ? 'FAILED' : 'SUCCEEDED',
        cases,
      );
    }
    await agent.cleanAll();
    return { runId: started.id as number, projectId: started.projectId as number, sessions };
  }

  it('names a test that passed and failed on one build, with its history, and not one that failed on another', async () => {
    const first = await run(app.id, {
      a1: [testCase('login'), testCase('logout')],
      a2: [testCase('login', 'FAILED'), testCase('logout'), testCase('skipped', 'SKIPPED')],
    });
    // The same bytes uploaded again are the same build: failing there and passing on the first upload is flaky.
    const again = await fixtures.file(h.ctx, alice.user, {
      name: 'app-again.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      bytes: 'contents of app.apk',
    });
    const second = await run(again.id, { a1: [testCase('search', 'FAILED')] });
    const third = await run(app.id, { a1: [testCase('search')] });
    // A rebuilt app failing logout says nothing about logout being flaky.
    const rebuilt = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      bytes: 'another build',
    });
    await run(rebuilt.id, { a1: [testCase('logout', 'FAILED')] });

    const path = `/api/me/projects/${first.projectId}/flaky-tests`;
    const all = await alice.call('GET', `${path}?sort=methodName_a`, { json: true });
    expect(all.status, all.text).toBe(200);
    expect(all.body.total).toBe(2);
    const [login, search] = all.body.data;
    expect(login).toMatchObject({
      className: 'com.example.SampleTest',
      methodName: 'login',
      passedCount: 1,
      failedCount: 1,
    });
    expect(login.appSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(
      login.history
        .map((o: { deviceSessionId: number; result: string; runId: number }) => [o.runId, o.deviceSessionId, o.result])
        .sort(),
    ).toEqual(
      [
        [first.runId, first.sessions.get('a1'), 'PASSED'],
        [first.runId, first.sessions.get('a2'), 'FAILED'],
      ].sort(),
    );
    expect(login.history.find((o: { result: string }) => o.result === 'FAILED')).toMatchObject({
      deviceName: 'Galaxy S24',
      deviceSessionURI: `/users/${alice.user.id}/device-sessions/${first.sessions.get('a2')}`,
    });
    expect(search).toMatchObject({ methodName: 'search', passedCount: 1, failedCount: 1, appSha256: login.appSha256 });
    expect(search.history.map((o: { runId: number; result: string }) => [o.runId, o.result])).toEqual([
      [third.runId, 'PASSED'],
      [second.runId, 'FAILED'],
    ]);
    expect(search.lastSeenTime).toBe(search.history[0].time);

    const filtered = await alice.call('GET', `${path}?filter=s_methodName_eq_search`, { json: true });
    expect(filtered.body).toMatchObject({ total: 1, data: [{ methodName: 'search' }] });
    const paged = await alice.call('GET', `${path}?sort=methodName_d&limit=1`, { json: true });
    expect(paged.body).toMatchObject({ total: 2, data: [{ methodName: 'search' }] });
    const searched = await alice.call('GET', `${path}?search=logi`, { json: true });
    expect(searched.body).toMatchObject({ total: 1, data: [{ methodName: 'login' }] });

    const xml = await alice.call('GET', path);
    expect(xml.status).toBe(200);
    expect(xml.text).toContain('<methodName>login</methodName>');

    // Each test case run says whether its test is flaky on the build its session tested.
    const flakyOf = async (sessionId: number | undefined, filter = '') => {
      const url = `/api/me/device-sessions/${sessionId}/test-case-runs${filter}`;
      const answer = await alice.call('GET', url, { json: true });
      expect(answer.status, answer.text).toBe(200);
      return Object.fromEntries(
        (answer.body.data as Array<{ methodName: string; flaky: boolean }>).map((c) => [c.methodName, c.flaky]),
      );
    };
    expect(await flakyOf(first.sessions.get('a2'))).toEqual({ login: true, logout: false, skipped: false });
    expect(await flakyOf(first.sessions.get('a1'))).toEqual({ login: true, logout: false });
    expect(await flakyOf(second.sessions.get('a1'))).toEqual({ search: true });
    expect(await flakyOf(first.sessions.get('a2'), '?filter=b_flaky_eq_true')).toEqual({ login: true });
  });

  it('is empty for a project without flaky tests, refuses a bad filter by name, and hides a foreign project', async () => {
    const only = await run(app.id, { a1: [testCase('login')], a2: [testCase('login')] });
    const path = `/api/me/projects/${only.projectId}/flaky-tests`;
    expect((await alice.call('GET', path, { json: true })).body).toMatchObject({ total: 0, data: [] });

    const bad = await alice.call('GET', `${path}?filter=s_colour_eq_red`, { json: true });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('colour');

    const session = only.sessions.get('a1');
    const cases = await alice.call('GET', `/api/me/device-sessions/${session}/test-case-runs`, { json: true });
    expect(cases.body.data).toEqual([expect.objectContaining({ methodName: 'login', flaky: false })]);

    const mallory = await h.user();
    const foreign = await mallory.call('GET', path, { json: true });
    expect(foreign.status).toBe(404);
    expect((await mallory.call('GET', `/api/me/projects/999999/flaky-tests`, { json: true })).status).toBe(404);
  });
});
