/**
 * Retrying a run (docs/api.md#abort-retry-timeout): without ids the whole run, as the established
 * service and its clients' plain `retry()` do; named device runs only; a running one interrupted
 * first. A replaced session leaves the run's lists and counters and stays readable by its own id.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CRAWLER, protocolWorld, startRun } from '../support/agent-protocol.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, testCase } from '../support/fake-agent.ts';
import type { Harness, TestUser } from '../support/harness.ts';

interface Session {
  readonly id: number;
  readonly state: string;
  readonly retryState: string;
}

describe.each(ENGINES)('retrying runs (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };

  beforeEach(async () => {
    ({ h, alice, agent, app } = await protocolWorld(engine));
  });
  afterEach(async () => h.close());

  /** A run on both Android phones. */
  const start = () =>
    startRun(alice, {
      frameworkId: CRAWLER,
      projectName: 'P',
      files: [{ id: app.id }],
      deviceIds: [agent.deviceIds.get('a1'), agent.deviceIds.get('a2')],
    });
  const sessions = async (runId: number): Promise<Session[]> =>
    (await alice.call('GET', `/api/v2/runs/${runId}/device-sessions`, { json: true })).body.data;
  const runOf = async (runId: number) => (await alice.call('GET', `/api/v2/runs/${runId}`, { json: true })).body;

  /** A run whose a1 session succeeded and a2 session failed; the devices clean again. */
  async function finishedRun() {
    const run = await start();
    const { assignments } = await agent.claim(['a1', 'a2']);
    const bySerial = new Map<string, number>();
    for (const assignment of assignments as Array<{ deviceRunId: number; deviceId: number }>)
      bySerial.set(assignment.deviceId === agent.deviceIds.get('a1') ? 'a1' : 'a2', assignment.deviceRunId);
    await agent.finish(bySerial.get('a1')!, 'SUCCEEDED', [testCase('passes')]);
    await agent.finish(bySerial.get('a2')!, 'FAILED', [testCase('fails', 'FAILED')]);
    await agent.cleanAll();
    expect(await runOf(run.id)).toMatchObject({ state: 'FINISHED', succeededDeviceCount: 1, failedDeviceCount: 1 });
    return { run, succeeded: bySerial.get('a1')!, failed: bySerial.get('a2')! };
  }

  it('retries every device run of the run without a body, as new sessions; the replaced ones leave the lists', async () => {
    const { run, succeeded, failed } = await finishedRun();
    const retried = await alice.call(
      'POST',
      `/api/v2/users/${alice.user.id}/projects/${run.projectId}/runs/${run.id}/retry`,
      { json: true },
    );
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toMatchObject({
      state: 'WAITING',
      deviceCount: 2,
      succeededDeviceCount: 0,
      failedDeviceCount: 0,
      finishedDeviceCount: 0,
      testCaseCount: 0,
    });

    const current = await sessions(run.id);
    expect(current.map((session) => [session.state, session.retryState])).toEqual([
      ['WAITING', 'MANUAL'],
      ['WAITING', 'MANUAL'],
    ]);
    expect(current.map((session) => session.id).filter((id) => id === succeeded || id === failed)).toEqual([]);
    const legacy = await alice.call('GET', `/api/me/projects/${run.projectId}/runs/${run.id}/device-runs`, {
      json: true,
    });
    expect(legacy.body.total).toBe(2);
    expect(legacy.body.data.map((deviceRun: { id: number }) => deviceRun.id)).toEqual(current.map((s) => s.id));
    // A filter on the list does not bring them back either.
    const filtered = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions?filter=state_eq_SUCCEEDED`, {
      json: true,
    });
    expect(filtered.body).toMatchObject({ total: 0, data: [] });

    // Each replaced session stays readable by its own id, results and all.
    for (const [id, state] of [
      [succeeded, 'SUCCEEDED'],
      [failed, 'FAILED'],
    ] as const) {
      for (const url of [
        `/api/v2/device-sessions/${id}`,
        `/api/me/projects/${run.projectId}/runs/${run.id}/device-sessions/${id}`,
      ]) {
        const answer = await alice.call('GET', url, { json: true });
        expect(answer.status, url).toBe(200);
        expect(answer.body).toMatchObject({ id, state, retryState: 'NONE', testCaseAllCount: 1 });
      }
      const cases = await alice.call('GET', `/api/v2/device-sessions/${id}/test-case-runs`, { json: true });
      expect(cases.body.total).toBe(1);
    }

    // The new sessions run; the run adds up what they did alone.
    const { assignments } = await agent.claim(['a1', 'a2']);
    for (const assignment of assignments as Array<{ deviceRunId: number }>)
      await agent.finish(assignment.deviceRunId, 'SUCCEEDED', [testCase('passes')]);
    expect(await runOf(run.id)).toMatchObject({
      state: 'FINISHED',
      deviceCount: 2,
      succeededDeviceCount: 2,
      failedDeviceCount: 0,
      testCaseCount: 2,
      failedTestCaseCount: 0,
    });
  });

  it('retries only the named device runs, in the clients’ query form and as JSON', async () => {
    const { run, succeeded, failed } = await finishedRun();
    const query = await alice.call(
      'POST',
      `/api/me/projects/${run.projectId}/runs/${run.id}/retry?deviceRunIds[]=${failed}`,
      {
        json: true,
      },
    );
    expect(query.status, query.text).toBe(200);
    expect(query.body).toMatchObject({ deviceCount: 2, succeededDeviceCount: 1, failedDeviceCount: 0 });
    const afterFirst = await sessions(run.id);
    expect(afterFirst.map((session) => [session.id === succeeded, session.state, session.retryState])).toEqual([
      [true, 'SUCCEEDED', 'NONE'],
      [false, 'WAITING', 'MANUAL'],
    ]);

    const json = await alice.call('POST', `/api/v2/me/runs/${run.id}/retry`, {
      json: true,
      body: { deviceRunIds: [succeeded] },
    });
    expect(json.status, json.text).toBe(200);
    const afterSecond = await sessions(run.id);
    expect(afterSecond.map((session) => [session.state, session.retryState])).toEqual([
      ['WAITING', 'MANUAL'],
      ['WAITING', 'MANUAL'],
    ]);
  });

  it('interrupts a running device run to retry it, and leaves a waiting one as it is', async () => {
    const run = await start();
    const { assignments } = await agent.claim(['a1']);
    const running = assignments[0]!.deviceRunId as number;
    const waiting = (await sessions(run.id)).find((session) => session.state === 'WAITING')!.id;

    const retried = await alice.call('POST', `/api/v2/runs/${run.id}/retry`, { json: true });
    expect(retried.status, retried.text).toBe(200);
    const current = await sessions(run.id);
    expect(current.map((session) => [session.id === waiting, session.state, session.retryState])).toEqual([
      [true, 'WAITING', 'NONE'],
      [false, 'WAITING', 'MANUAL'],
    ]);
    expect((await alice.call('GET', `/api/v2/device-sessions/${running}`, { json: true })).body).toMatchObject({
      state: 'ABORTED',
      retryState: 'NONE',
    });
    // Its agent is told to stop, and what it still sends is kept on the replaced session, not the run.
    const heartbeat = await agent.post('/heartbeat', { running: [running], unhealthy: [] });
    expect(heartbeat.body.abort).toEqual([running]);
    expect((await agent.finish(running, 'ABORTED', [testCase('partial')])).status).toBe(200);
    expect((await alice.call('GET', `/api/v2/device-sessions/${running}`, { json: true })).body).toMatchObject({
      state: 'ABORTED',
      testCaseAllCount: 1,
    });
    expect(await runOf(run.id)).toMatchObject({
      state: 'WAITING',
      deviceCount: 2,
      abortedDeviceCount: 0,
      testCaseCount: 0,
    });
  });

  it('refuses, naming them, what cannot be retried, and retries nothing then', async () => {
    const waitingRun = await start();
    const nothing = await alice.call('POST', `/api/v2/runs/${waitingRun.id}/retry`, { json: true });
    expect(nothing.status).toBe(400);
    expect(nothing.body.message).toMatch(
      new RegExp(`^Run ${waitingRun.id} has nothing to retry: device run \\d+ has not started yet`),
    );
    await alice.call('POST', `/api/v2/runs/${waitingRun.id}/abort`, { json: true });
    await agent.cleanAll();

    const { run, succeeded, failed } = await finishedRun();
    const first = await alice.call('POST', `/api/v2/runs/${run.id}/retry`, {
      json: true,
      body: { deviceRunIds: [failed] },
    });
    expect(first.status).toBe(200);
    const before = await sessions(run.id);
    const newest = before.find((session) => session.retryState === 'MANUAL')!.id;
    const refused = await alice.call('POST', `/api/v2/runs/${run.id}/retry`, {
      json: true,
      body: { deviceRunIds: [succeeded, failed, newest] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(
      `Cannot retry: device run ${failed} was already retried; retry its newest session; device run ${newest} has not started yet; it will run as it is`,
    );
    expect(await sessions(run.id)).toEqual(before);

    // A device run of another run is not one of this run's.
    const foreign = await alice.call('POST', `/api/v2/runs/${run.id}/retry`, {
      json: true,
      body: { deviceRunIds: [(await sessions(waitingRun.id))[0]!.id] },
    });
    expect(foreign.status).toBe(404);
  });

  it("answers 404 for another user's run or device runs, and changes nothing of them", async () => {
    const { run, failed } = await finishedRun();
    const before = await sessions(run.id);
    const bob = await h.user();
    for (const url of [`/api/v2/runs/${run.id}/retry`, `/api/me/projects/${run.projectId}/runs/${run.id}/retry`]) {
      const answer = await bob.call('POST', url, { json: true });
      expect(answer.status, url).toBe(404);
    }
    expect(
      (
        await bob.call('POST', `/api/v2/users/${alice.user.id}/projects/${run.projectId}/runs/${run.id}/retry`, {
          json: true,
        })
      ).status,
    ).toBeGreaterThanOrEqual(403);
    expect((await bob.call('POST', `/api/v2/device-sessions/${failed}/retry`, { json: true })).status).toBe(404);
    expect(await sessions(run.id)).toEqual(before);
  });

  it('makes one new session per device run when two retries race', async () => {
    const { run } = await finishedRun();
    const answers = await Promise.all(
      [1, 2].map(() => alice.call('POST', `/api/v2/runs/${run.id}/retry`, { json: true })),
    );
    expect(answers.some((answer) => answer.status === 200)).toBe(true);
    for (const answer of answers) expect([200, 400], answer.text).toContain(answer.status);
    const current = await sessions(run.id);
    expect(current).toHaveLength(2);
    expect(await runOf(run.id)).toMatchObject({ deviceCount: 2, waitingDeviceCount: 2 });
  });
});
