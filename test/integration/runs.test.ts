import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Device } from '../../src/domain/devices.ts';
import { endDeviceRun } from '../../src/services/run-lifecycle.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

describe.each(ENGINES)('test runs and device runs (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let projectId: number;
  let devices: Device[];
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user();
    projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'App' } })).body.id;
    devices = [
      await fixtures.device(h.ctx, 'Pixel 8'),
      await fixtures.device(h.ctx, 'Galaxy S24'),
      await fixtures.device(h.ctx, 'Moto G'),
    ];
  });
  afterEach(async () => h.close());

  it('lists runs newest first with their counters and ratios', async () => {
    await fixtures.run(h.ctx, alice.user, projectId, devices, ['SUCCEEDED', 'FAILED', 'EXCLUDED'], {
      testCases: { passed: 4, failed: 1 },
    });
    h.advance(1000);
    await fixtures.run(h.ctx, alice.user, projectId, devices, ['RUNNING', 'WAITING'], { name: 'Nightly' });
    const answer = await alice.call('GET', `/api/me/projects/${projectId}/runs`, { json: true });
    expect(answer.status).toBe(200);
    expect(answer.body.total).toBe(2);
    const [nightly, first] = answer.body.data;
    expect(nightly).toMatchObject({
      displayName: 'Nightly',
      number: 2,
      state: 'RUNNING',
      runningDeviceCount: 1,
      waitingDeviceCount: 1,
      executionRatio: 0,
    });
    expect(first).toMatchObject({
      projectId,
      projectName: 'App',
      number: 1,
      displayName: 'Test Run 1',
      state: 'FINISHED',
      deviceCount: 3,
      finishedDeviceCount: 3,
      succeededDeviceCount: 1,
      failedDeviceCount: 1,
      excludedDeviceCount: 1,
      testCaseCount: 10,
      executedTestCaseCount: 10,
      successfulTestCaseCount: 8,
      failedTestCaseCount: 2,
      executionRatio: 1,
      successRatio: 1 / 3,
      startedById: alice.user.id,
      startedByDisplayName: alice.user.email,
      userId: alice.user.id,
      selfURI: `/users/${alice.user.id}/projects/${projectId}/runs/${first.id}`,
      config: { projectId, osType: 'ANDROID', files: [{ id: 1, action: 'INSTALL' }] },
    });
    const sorted = await alice.call(
      'GET',
      `/api/me/projects/${projectId}/runs?sort=number_a&filter=state_eq_FINISHED`,
      { json: true },
    );
    expect(sorted.body.data.map((r: { number: number }) => r.number)).toEqual([1]);
    const searched = await alice.call('GET', `/api/me/projects/${projectId}/runs?search=test%20run`, { json: true });
    expect(searched.body.data.map((r: { displayName: string }) => r.displayName)).toEqual(['Test Run 1']);
  });

  it('reads a run nested, top-level and under /me/runs, and 404s for the wrong project', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices, ['WAITING']);
    for (const url of [
      `/api/me/projects/${projectId}/runs/${run.id}`,
      `/api/v2/runs/${run.id}`,
      `/api/me/runs/${run.id}`,
    ]) {
      const answer = await alice.call('GET', url, { json: true });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: run.id, state: 'WAITING', deviceCount: 1 });
    }
    const other = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Other' } })).body.id;
    expect((await alice.call('GET', `/api/me/projects/${other}/runs/${run.id}`)).status).toBe(404);
    const xml = parseXml((await alice.call('GET', `/api/v2/runs/${run.id}`)).text);
    expect(xml.apiTestRun.config.files.apiTestRunConfigFile).toMatchObject({ id: '1', action: 'INSTALL' });
  });

  it("shows each reader a run's config as theirs, read after read, and its project's new name", async () => {
    // The presented config is kept between reads (api/present/test-run.ts): what it holds of the
    // caller (their paths, their plan's longest timeout) and of the project must still be theirs.
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices, ['SUCCEEDED']);
    const bob = await h.user({ plan: 'PLATINUM' });
    const shared = await alice.call('POST', `/api/me/projects/${projectId}/share`, {
      json: true,
      form: { email: bob.user.email },
    });
    expect(shared.status, shared.text).toBe(200);
    const configOf = async (reader: TestUser) => {
      const answer = await reader.call('GET', `/api/me/projects/${projectId}/runs`, { json: true });
      expect(answer.status, answer.text).toBe(200);
      return answer.body.data[0].config;
    };
    for (let read = 0; read < 2; read++)
      for (const [reader, seconds] of [
        [alice, 3600],
        [bob, 7200],
      ] as const) {
        const config = await configOf(reader);
        expect(config).toMatchObject({
          selfURI: `/users/${reader.user.id}/projects/${projectId}/runs/${run.id}/config`,
          projectName: 'App',
          maxTestTimeout: { unit: 'SECONDS', value: seconds },
        });
        expect(config.files[0].selfURI).toMatch(new RegExp(`^/users/${reader.user.id}/files/`));
      }
    const renamed = await alice.call('POST', `/api/me/projects/${projectId}`, {
      json: true,
      form: { name: 'Renamed' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(await configOf(alice)).toMatchObject({ projectName: 'Renamed' });
    expect(await configOf(bob)).toMatchObject({ projectName: 'Renamed' });
  });

  it('shows device runs in the legacy view and device sessions in the modern one', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices, ['SUCCEEDED', 'TIMEOUT', 'WAITING'], {
      testCases: { passed: 2, failed: 0 },
    });
    const legacy = await alice.call('GET', `/api/me/projects/${projectId}/runs/${run.id}/device-runs`, { json: true });
    expect(legacy.status).toBe(200);
    expect(legacy.body.total).toBe(3);
    const [succeeded, timedOut, waiting] = legacy.body.data;
    expect(succeeded).toMatchObject({
      deviceSessionId: succeeded.id,
      deviceName: 'Pixel 8',
      device: { displayName: 'Pixel 8', osType: 'ANDROID', softwareVersion: { releaseVersion: '14', apiLevel: 34 } },
      runStatus: 'SUCCEEDED',
      testCaseAllNo: 2,
      testCasePassedNo: 2,
      testCaseSuccessNo: 2,
      testCaseFailedNo: 0,
      testRunId: run.id,
      projectId,
    });
    expect(timedOut.runStatus).toBe('WARNING');
    expect(waiting).toMatchObject({
      runStatus: 'WAITING',
      currentState: { deviceRunStateType: 'WAITING', status: 'WAITING' },
    });

    const modern = await alice.call(
      'GET',
      `/api/me/projects/${projectId}/runs/${run.id}/device-sessions?filter=state_in_TIMEOUT|WAITING`,
      { json: true },
    );
    expect(modern.body.data.map((s: { state: string }) => s.state)).toEqual(['TIMEOUT', 'WAITING']);
    expect(modern.body.data[0]).toMatchObject({
      id: timedOut.id,
      type: 'AUTOMATIC',
      retryState: 'NONE',
      timeLimit: 600,
      selfURI: `/users/${alice.user.id}/device-sessions/${timedOut.id}`,
    });

    for (const url of [
      `/api/me/projects/${projectId}/runs/${run.id}/device-sessions/${waiting.id}`,
      `/api/v2/device-sessions/${waiting.id}`,
      `/api/me/device-sessions/${waiting.id}`,
    ]) {
      const answer = await alice.call('GET', url, { json: true });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: waiting.id, state: 'WAITING' });
    }
    const one = await alice.call('GET', `/api/me/projects/${projectId}/runs/${run.id}/device-runs/${waiting.id}`);
    expect(parseXml(one.text).apiDeviceRun).toMatchObject({ runStatus: 'WAITING', device: { displayName: 'Moto G' } });
    const other = await fixtures.run(h.ctx, alice.user, projectId, devices, ['WAITING']);
    expect(
      (await alice.call('GET', `/api/me/projects/${projectId}/runs/${other.id}/device-runs/${waiting.id}`)).status,
    ).toBe(404);
  });

  it('deletes a run', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices, ['SUCCEEDED']);
    expect((await alice.call('DELETE', `/api/me/projects/${projectId}/runs/${run.id}`)).status).toBe(204);
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`)).status).toBe(404);
  });

  it('retries a device run lost twice at once only once (a lost lease and its restarted agent)', async () => {
    const run = await fixtures.run(h.ctx, alice.user, projectId, devices.slice(0, 1), ['RUNNING']);
    const [lost] = await h.ctx.store.deviceRuns.ofRuns([run.id]);
    await h.database.db
      .updateTable('device_runs')
      .set({ auto_retries_left_count: 1 })
      .where('id', '=', lost!.id)
      .execute();
    // Both enders read the device run while it was RUNNING, as the reaper and an agent's hello do
    // in their own transactions on PostgreSQL before either commits.
    const stale = { ...lost!, autoRetriesLeftCount: 1 };
    const ending = { state: 'WARNING', failReason: 'the agent was lost', testCases: null } as const;
    await Promise.all(
      [1, 2].map(() =>
        h.ctx.store.transaction((store) => endDeviceRun(store, h.ctx.clock(), stale, ending, new Set())),
      ),
    );
    // Retried once: the run lists its one retry, and the lost session stays readable by id.
    const sessions = (await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true })).body.data;
    expect(
      sessions.map((session: { state: string; retryState: string }) => [session.state, session.retryState]).sort(),
    ).toEqual([['WAITING', 'AUTO']]);
    const replaced = await alice.call('GET', `/api/v2/device-sessions/${lost!.id}`, { json: true });
    expect(replaced.body).toMatchObject({ state: 'WARNING', retryState: 'NONE' });
    expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body).toMatchObject({
      deviceCount: 1,
      waitingDeviceCount: 1,
    });
  });

  it('numbers runs started at the same moment in one project one after another', async () => {
    const starts = Array.from({ length: 8 }, () =>
      h.ctx.store.transaction((store) =>
        store.testRuns.insert({
          projectId,
          userId: alice.user.id,
          name: null,
          osType: 'ANDROID',
          config: fixtures.runSettings(projectId),
          frameworkId: null,
          startedById: alice.user.id,
          createTime: h.ctx.clock(),
        }),
      ),
    );
    const numbers = (await Promise.all(starts)).map((run) => run.number).sort((a, b) => a - b);
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
