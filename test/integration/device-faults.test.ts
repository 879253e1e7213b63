/**
 * The customer's faults are the customer's (issue 15), at the protocol: oversized results are cut,
 * never refused; what the customer's package caused leaves the device's failure streak as it was;
 * a device at the failure limit is checked once (health, full cleaning) before it stays out. The
 * check itself, by a real agent: device-health-check.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const CRAWLER = 6;

describe.each(ENGINES)('device faults at the agent protocol (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };
  let device: number;

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    alice = await h.user({ plan: 'GOLD' });
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8')]);
    await agent.cleanAll();
    device = agent.deviceIds.get('a1')!;
    app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example', min_sdk: '24' },
    });
  });
  afterEach(async () => h.close());

  const deviceRow = () =>
    h.database.db
      .selectFrom('devices')
      .select(['state', 'state_reason', 'infra_failure_streak'])
      .where('id', '=', device)
      .executeTakeFirstOrThrow();

  /** Starts a run on the device and claims it; answers the device run's id. */
  async function claimOne(): Promise<{ runId: number; projectId: number; deviceRunId: number }> {
    const run = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: { frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device] },
    });
    expect(run.status, run.text).toBe(201);
    const { assignments } = await agent.claim(['a1']);
    expect(assignments).toHaveLength(1);
    return { runId: run.body.id, projectId: run.body.projectId, deviceRunId: assignments[0]!.deviceRunId };
  }

  it('keeps a result with a 5,000-character name, a 200 KB message and a 2 MB stack trace, cut with a marker', async () => {
    const { runId, projectId, deviceRunId } = await claimOne();
    const big = {
      ...testCase('x', 'FAILED'),
      methodName: 'n'.repeat(5000),
      errorMessage: 'm'.repeat(200_000),
      stacktrace: 's'.repeat(2_000_000),
    };
    const answer = await agent.post(`/device-runs/${deviceRunId}/result`, {
      seq: 1000,
      outcome: 'FAILED',
      failReason: 'f'.repeat(10_000),
      testCases: [big, testCase('small')],
    });
    expect(answer.status, answer.text.slice(0, 500)).toBe(200);
    const cases = await alice.call(
      'GET',
      `/api/me/projects/${projectId}/runs/${runId}/device-sessions/${deviceRunId}/test-case-runs`,
      { json: true },
    );
    expect(cases.body.data).toHaveLength(2);
    const cut = cases.body.data.find((c: { methodName: string }) => c.methodName !== 'small');
    expect(cut.methodName).toHaveLength(1000);
    expect(cut.methodName).toMatch(/… \[cut: \d+ more characters\]$/);
    const sessions = await alice.call('GET', `/api/v2/runs/${runId}/device-sessions`, { json: true });
    expect(sessions.body.data[0].state).toBe('FAILED');
    const stored = await h.database.db
      .selectFrom('test_case_runs')
      .select(['error_message', 'stacktrace'])
      .where('device_run_id', '=', deviceRunId)
      .where('result', '=', 'FAILED')
      .executeTakeFirstOrThrow();
    expect(stored.error_message!.length).toBe(100_000);
    expect(stored.stacktrace!.length).toBe(1_000_000);
    expect(stored.stacktrace).toMatch(/more characters\]$/);
    const reason = await h.database.db
      .selectFrom('device_runs')
      .select('fail_reason')
      .where('id', '=', deviceRunId)
      .executeTakeFirstOrThrow();
    expect(reason.fail_reason!.length).toBeLessThanOrEqual(4000);
    expect(reason.fail_reason).toMatch(/more characters\]$/);
  });

  it("neither counts nor clears the failure streak for what the customer's package caused", async () => {
    await agent.finish((await claimOne()).deviceRunId, 'WARNING');
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    expect(await deviceRow()).toMatchObject({ infra_failure_streak: 1 });
    for (let run = 0; run < 3; run++) {
      const { deviceRunId } = await claimOne();
      const answer = await agent.post(`/device-runs/${deviceRunId}/result`, {
        seq: 1000,
        outcome: 'FAILED',
        failReason: 'the test package could not be unpacked: the zip holds run-tests.sh more than once',
        testCases: [],
        refused: true,
      });
      expect(answer.body).toEqual({ state: 'FAILED' });
      expect(await deviceRow()).toEqual({ state: 'CLEANING', state_reason: null, infra_failure_streak: 1 });
      await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    }
    expect((await deviceRow()).state).toBe('IDLE');
  });

  it('tells the agent how long it may keep inputs after their last use: a week here, an hour on the public cloud', async () => {
    expect((await agent.hello([androidDevice('a1', 'Pixel 8')])).inputRetentionMs).toBe(7 * 24 * 3_600_000);
    const publicCloud = await createHarness(engine, { flavour: 'public' });
    try {
      const host = await fakeAgent(publicCloud.app, publicCloud.ctx, 'host-2');
      expect((await host.hello([androidDevice('p1', 'Pixel 8')])).inputRetentionMs).toBe(3_600_000);
    } finally {
      await publicCloud.close();
    }
  });

  it('checks a device once at the failure limit before it stays out of service', async () => {
    const warn = async () => {
      const answer = await agent.finish((await claimOne()).deviceRunId, 'WARNING');
      expect(answer.status).toBe(200);
      return answer.body;
    };
    expect(await warn()).toEqual({ state: 'WARNING' });
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    expect(await warn()).toEqual({ state: 'WARNING' });
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    // The third in a row: not out of service yet, but the agent is told to check it.
    expect(await warn()).toEqual({ state: 'WARNING', checkDevice: true });
    expect(await deviceRow()).toMatchObject({
      state: 'CLEANING',
      state_reason: expect.stringContaining('being checked (health, full cleaning)'),
      infra_failure_streak: 3,
    });
    expect(
      (await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'health checked; rebooted' })).body,
    ).toEqual({ state: 'IDLE' });
    // Failing again after the check: out until an operator returns it.
    expect(await warn()).toEqual({ state: 'WARNING' });
    expect(await deviceRow()).toMatchObject({
      state: 'NOT_OPERATIONAL',
      state_reason: expect.stringContaining('again after an automatic health check and cleaning'),
    });

    // A check that fails keeps it out at once, with the reason.
    const operator = await h.user({ role: 'ADMIN' });
    expect(
      (await operator.call('POST', `/api/admin/devices/${device}/return-to-service`, { json: true, body: {} })).status,
    ).toBe(200);
    expect((await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' })).body).toEqual({
      state: 'IDLE',
    });
    for (let run = 0; run < 2; run++) {
      await warn();
      await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    }
    expect(await warn()).toMatchObject({ checkDevice: true });
    expect(
      (
        await agent.post(`/devices/${device}/cleaned`, {
          ok: false,
          report: 'health check failed: the phone does not answer',
        })
      ).body,
    ).toEqual({ state: 'NOT_OPERATIONAL' });
    // A run that works ends the streak.
    expect(
      (await operator.call('POST', `/api/admin/devices/${device}/return-to-service`, { json: true, body: {} })).status,
    ).toBe(200);
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    await agent.finish((await claimOne()).deviceRunId, 'SUCCEEDED', [testCase('t')]);
    expect(await deviceRow()).toMatchObject({ infra_failure_streak: 0 });
  });
});
