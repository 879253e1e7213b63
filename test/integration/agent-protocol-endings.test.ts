/** How device runs end: aborts, retries, refused settings, lost agents, cleaning that fails. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CRAWLER, protocolWorld, startRun } from '../support/agent-protocol.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, fakeAgent, testCase } from '../support/fake-agent.ts';
import { type Harness, type TestUser, call } from '../support/harness.ts';

describe.each(ENGINES)('how device runs end through the agent protocol (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };

  beforeEach(async () => {
    ({ h, alice, agent, app } = await protocolWorld(engine));
  });
  afterEach(async () => h.close());

  const start = (body: Record<string, unknown>) => startRun(alice, body);

  it('aborts: waiting ones at once, running ones through the agent, keeping their partial results', async () => {
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }] });
    const { assignments } = await agent.claim(['a1']);
    const aborted = await alice.call('POST', `/api/v2/runs/${run.id}/abort`, { json: true });
    expect(aborted.status).toBe(200);
    expect(aborted.body).toMatchObject({ state: 'FINISHED', abortedDeviceCount: 2 });
    const stop = await agent.post('/heartbeat', { running: [assignments[0]!.deviceRunId], unhealthy: [] });
    expect(stop.body.abort).toEqual([assignments[0]!.deviceRunId]);
    const late = await agent.finish(assignments[0]!.deviceRunId, 'ABORTED', [testCase('partial')]);
    expect(late.status).toBe(200);
    const session = await alice.call('GET', `/api/v2/device-sessions/${assignments[0]!.deviceRunId}`, { json: true });
    expect(session.body).toMatchObject({ state: 'ABORTED', testCaseAllCount: 1 });
    // The finished run keeps its final tallies; the late result must reach them.
    const total = await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true });
    expect(total.body).toMatchObject({ state: 'FINISHED', abortedDeviceCount: 2, testCaseCount: 1 });
  });

  it('retries failed device sessions as new sessions, and infrastructure failures automatically', async () => {
    const run = await start({
      frameworkId: CRAWLER,
      projectName: 'P',
      files: [{ id: app.id }],
      deviceIds: [agent.deviceIds.get('a1')],
      maxAutoRetriesCount: 1,
    });
    let { assignments } = await agent.claim(['a1']);
    const started = (await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body;
    expect(started).toMatchObject({ state: 'RUNNING' });
    await agent.finish(assignments[0]!.deviceRunId, 'WARNING');
    await agent.post(`/devices/${agent.deviceIds.get('a1')}/cleaned`, { ok: true, report: 'clean' });
    // The automatic retry replaces the lost session in the run's list; the lost one stays readable by id.
    const afterAuto = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    expect(afterAuto.body.data.map((s: { state: string; retryState: string }) => [s.state, s.retryState])).toEqual([
      ['WAITING', 'AUTO'],
    ]);
    const lost = await alice.call('GET', `/api/v2/device-sessions/${assignments[0]!.deviceRunId}`, { json: true });
    expect(lost.body).toMatchObject({ state: 'WARNING', retryState: 'NONE' });
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({
      state: 'WAITING',
      deviceCount: 1,
    });

    // Claimed again, the run runs again, and keeps the time it first started.
    h.advance(60_000);
    ({ assignments } = await agent.claim(['a1']));
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({
      state: 'RUNNING',
      startTime: started.startTime,
    });
    await agent.finish(assignments[0]!.deviceRunId, 'FAILED', [testCase('t', 'FAILED')]);
    await agent.post(`/devices/${agent.deviceIds.get('a1')}/cleaned`, { ok: true, report: 'clean' });
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({
      state: 'FINISHED',
      deviceCount: 1,
      failedDeviceCount: 1,
    });
    const retried = await alice.call('POST', `/api/v2/runs/${run.id}/retry`, { json: true });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ state: 'WAITING', deviceCount: 1, failedDeviceCount: 0 });
    const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    expect(sessions.body.data.map((s: { retryState: string }) => s.retryState)).toEqual(['MANUAL']);
    const replaced = await alice.call('GET', `/api/v2/device-sessions/${assignments[0]!.deviceRunId}`, { json: true });
    expect(replaced.body).toMatchObject({ state: 'FAILED', retryState: 'AUTO' });
    const noneLeft = await alice.call('POST', `/api/v2/device-sessions/${sessions.body.data[0].id}/retry`, {
      json: true,
    });
    expect(noneLeft.status).toBe(400);
    expect(noneLeft.body.message).toMatch(/has not started yet/);
  });

  it('neither retries nor holds against the device what it refused to do for the run (its settings)', async () => {
    const device = agent.deviceIds.get('a1')!;
    const deviceRow = () =>
      h.database.db
        .selectFrom('devices')
        .select(['state', 'infra_failure_streak'])
        .where('id', '=', device)
        .executeTakeFirstOrThrow();
    const run = await start({
      frameworkId: CRAWLER,
      projectName: 'P',
      files: [{ id: app.id }],
      deviceIds: [device],
      maxAutoRetriesCount: 2,
    });
    const { assignments } = await agent.claim(['a1']);
    const refused = {
      seq: 1000,
      outcome: 'WARNING',
      failReason: 'the device settings could not be applied: the password is wrong',
      testCases: [],
      refused: true,
    };
    expect((await agent.post(`/device-runs/${assignments[0]!.deviceRunId}/result`, refused)).status).toBe(200);
    const sessions = (await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true })).body.data;
    expect(sessions.map((s: { state: string; retryState: string }) => [s.state, s.retryState])).toEqual([
      ['WARNING', 'NONE'],
    ]);
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({
      state: 'FINISHED',
      warningDeviceCount: 1,
    });
    // The device is cleaned as after any run, with no infrastructure failure counted against it
    // (an ordinary WARNING would count one, and three in a row take it out of service).
    expect(await deviceRow()).toEqual({ state: 'CLEANING', infra_failure_streak: 0 });
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    const next = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device] });
    const [again] = (await agent.claim(['a1'])).assignments;
    await agent.finish(again!.deviceRunId, 'WARNING');
    expect(await deviceRow()).toEqual({ state: 'CLEANING', infra_failure_streak: 1 });
    expect((await alice.call('GET', `/api/v2/runs/${next.id}`, { json: true })).body.state).toBe('FINISHED');
    await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
  });

  it('gives up on device runs of a lost agent, and fails what a restarted agent was running', async () => {
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }] });
    const { assignments } = await agent.claim(['a1', 'a2']);
    h.advance(h.ctx.limits.leaseMs + 1);
    const reaper = (await import('../../src/jobs/reaper.ts')).startReaper({
      ctx: h.ctx,
      log: () => undefined,
      intervalMs: 60_000,
      agentTtlMs: 15_000,
    });
    await reaper.tick();
    await reaper.stop();
    const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    expect(sessions.body.data.map((s: { state: string }) => s.state)).toEqual(['WARNING', 'WARNING']);
    const devices = await call(h.app, 'GET', '/api/v2/devices?filter=online_eq_false', { json: true });
    expect(devices.body.total).toBe(3);
    const late = await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED');
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('no longer holds it');

    const other = await fakeAgent(h.app, h.ctx, 'intruder');
    const intrusion = await other.finish(assignments[1]!.deviceRunId, 'SUCCEEDED');
    expect(intrusion.status).toBe(409);
    expect(
      (
        await call(h.app, 'POST', '/agent/v1/heartbeat', {
          body: { running: [], unhealthy: [] },
          headers: { authorization: `Bearer ${alice.key}` },
        })
      ).status,
    ).toBe(401);
  });

  it('takes a device out of service when cleaning fails, and waiting runs say so', async () => {
    const device = agent.deviceIds.get('a1')!;
    const run = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device] });
    const { assignments } = await agent.claim(['a1']);
    await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED', [testCase('t')]);
    const next = await start({ frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [device] });
    const cleaned = await agent.post(`/devices/${device}/cleaned`, {
      ok: false,
      report: 'package com.example could not be removed',
    });
    expect(cleaned.body).toEqual({ state: 'NOT_OPERATIONAL' });
    const waiting = await alice.call('GET', `/api/v2/runs/${next.id}`, { json: true });
    expect(waiting.body.message).toContain(
      'not operational (cleaning failed: package com.example could not be removed)',
    );
    expect((await agent.claim(['a1'])).assignments).toHaveLength(0);
    const listed = await call(h.app, 'GET', `/api/v2/devices/${device}`, { json: true });
    expect(listed.body).toMatchObject({ locked: true, lockReason: 'NOT_OPERATIONAL', available: false });
    expect(run.id).not.toBe(next.id);

    // An operator returns it: the agent hears to clean it on its next heartbeat, and once clean it takes the waiting run.
    expect((await agent.post('/heartbeat', { running: [], unhealthy: [] })).body.clean).toEqual([]);
    expect(
      (await alice.call('POST', `/api/admin/devices/${device}/return-to-service`, { json: true, body: {} })).status,
    ).toBe(403);
    const operator = await h.user({ role: 'ADMIN' });
    const returned = await operator.call('POST', `/api/admin/devices/${device}/return-to-service`, {
      json: true,
      body: {},
    });
    expect(returned.status, returned.text).toBe(200);
    expect(returned.body).toMatchObject({ state: 'CLEANING' });
    expect(
      (await operator.call('POST', `/api/admin/devices/${device}/return-to-service`, { json: true, body: {} })).status,
    ).toBe(409);
    expect((await agent.post('/heartbeat', { running: [], unhealthy: [] })).body.clean).toEqual([device]);
    expect((await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' })).body).toEqual({
      state: 'IDLE',
    });
    expect((await agent.claim(['a1'])).assignments.map((assignment) => assignment.deviceId)).toEqual([device]);
  });
});
