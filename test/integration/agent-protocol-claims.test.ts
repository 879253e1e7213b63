/** Claims: the queue's order, answers that never reached the agent, waking waiting claims, SERIAL and SINGLE runs. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CRAWLER, protocolWorld, startRun } from '../support/agent-protocol.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import { claim } from '../../src/services/agent-session.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

describe.each(ENGINES)('claims of the agent protocol (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let app: { id: number };

  beforeEach(async () => {
    ({ h, alice, agent, app } = await protocolWorld(engine));
  });
  afterEach(async () => h.close());

  const start = (body: Record<string, unknown>) => startRun(alice, body);

  it('takes waiting device runs by plan, then age, one at a time per device', async () => {
    const silver = await h.user({ plan: 'SILVER' });
    const platinum = await h.user({ plan: 'PLATINUM' });
    const device = agent.deviceIds.get('a1')!;
    const startFor = async (user: TestUser, name: string) => {
      const apk = await fixtures.file(h.ctx, user.user, { name: 'a.apk', inputType: 'APPLICATION', osType: 'ANDROID' });
      h.advance(1000);
      const answer = await user.call('POST', '/api/v2/runs', {
        json: true,
        body: { frameworkId: CRAWLER, projectName: name, files: [{ id: apk.id }], deviceIds: [device] },
      });
      expect(answer.status).toBe(201);
      return answer.body.id as number;
    };
    const order = [
      await startFor(silver, 'silver-1'),
      await startFor(alice, 'gold-1'),
      await startFor(platinum, 'platinum-1'),
      await startFor(alice, 'gold-2'),
      await startFor(platinum, 'platinum-2'),
    ];
    const waiting = await alice.call('GET', `/api/v2/runs/${order[3]}`, { json: true });
    expect(waiting.body.queuePosition).toBe(4);
    expect(waiting.body.message).toContain('3 device runs ahead');

    const taken: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { assignments } = await agent.claim(['a1']);
      expect(assignments).toHaveLength(1);
      const deviceRun = await h.ctx.store.deviceRuns.findById(assignments[0]!.deviceRunId);
      taken.push(deviceRun!.testRunId);
      expect((await agent.claim(['a1'], [assignments[0]!.deviceRunId])).assignments).toHaveLength(0); // busy: never two at once
      await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED', [testCase('t')]);
      await agent.post(`/devices/${device}/cleaned`, { ok: true, report: 'clean' });
    }
    expect(taken).toEqual([order[2], order[4], order[1], order[3], order[0]]);
  });

  it('hands an assignment out again when the answer to a claim was lost, never one the agent is running', async () => {
    await start({
      frameworkId: CRAWLER,
      projectName: 'P',
      files: [{ id: app.id }],
      deviceIds: [agent.deviceIds.get('a1')],
    });
    const first = await agent.claim(['a1', 'a2']);
    expect(first.assignments).toHaveLength(1);
    const id = first.assignments[0]!.deviceRunId;
    // The agent gave up on that request (or its answer never arrived): a1 still looks free to it.
    const again = await agent.claim(['a1', 'a2']);
    expect(again.assignments).toMatchObject([
      { deviceRunId: id, deviceId: agent.deviceIds.get('a1'), kind: 'crawler' },
    ]);
    expect((await agent.claim(['a2'], [id])).assignments).toEqual([]);
    expect((await agent.claim(['a1', 'a2'], [id])).assignments).toEqual([]);
    const steps = await h.ctx.store.deviceRuns.steps(id);
    expect(steps.map((step) => step.type)).toEqual(['WAITING', 'PREPARING']);
  });

  it('wakes a newer claim that looked before an older claim of the same agent took work it will never receive', async () => {
    const slow = await createHarness(engine, { limits: { claimWaitMs: 20_000 } });
    try {
      const owner = await slow.user();
      const host = await fakeAgent(slow.app, slow.ctx, 'host-2');
      await host.hello([androidDevice('x1')]);
      await host.cleanAll();
      const deviceId = host.deviceIds.get('x1')!;
      const agentRecord = (await slow.ctx.store.agents.list()).find((candidate) => candidate.name === 'host-2')!;
      const project = await owner.call('POST', '/api/me/projects', {
        json: true,
        body: 'name=P',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });

      // The agent hung up on its first claim to claim again; the new claim finds nothing yet and waits.
      // A claim's last look before it waits asks for stranded devices: once that has answered, the
      // claim is parked (no wall-clock guess of how long the look takes).
      const queue = slow.ctx.store.queue;
      const releaseStranded = queue.releaseStranded;
      let parked!: () => void;
      const looked = new Promise<void>((resolve) => (parked = resolve));
      queue.releaseStranded = async (...args) => {
        const stranded = await releaseStranded.apply(queue, args);
        parked();
        return stranded;
      };
      const started = performance.now();
      const newer = host.post('/claims', { deviceIds: [deviceId], running: [], waitMs: 20_000 });
      await looked;
      // Meanwhile the first claim, still working on the server, takes a device run (its answer goes nowhere).
      const run = await fixtures.run(
        slow.ctx,
        owner.user,
        project.body.id,
        [(await slow.ctx.store.devices.findById(deviceId))!],
        ['WAITING'],
      );
      const older = await claim(
        slow.ctx,
        agentRecord,
        { deviceIds: [deviceId], running: [], waitMs: 0 },
        AbortSignal.abort(),
      );
      expect(older.assignments).toHaveLength(1);

      const answer = await newer;
      expect(answer.body.assignments).toMatchObject([{ deviceRunId: older.assignments[0]!.deviceRunId, deviceId }]);
      expect(performance.now() - started).toBeLessThan(10_000); // woken, not answered at the end of its wait
      expect(run.state).toBe('WAITING');
    } finally {
      await slow.close();
    }
  });

  it('has a device cleaned when the device run it was given ended before the agent ever received it', async () => {
    const run = await start({
      frameworkId: CRAWLER,
      projectName: 'P',
      files: [{ id: app.id }],
      deviceIds: [agent.deviceIds.get('a1')],
      maxAutoRetriesCount: 1,
    });
    const lost = await agent.claim(['a1']); // this answer never reaches the agent
    expect(lost.assignments).toHaveLength(1);
    // The agent keeps heartbeating, but not for a device run it does not know: the lease runs out.
    h.advance(h.ctx.limits.leaseMs + 1);
    const reaper = (await import('../../src/jobs/reaper.ts')).startReaper({
      ctx: h.ctx,
      log: () => undefined,
      intervalMs: 60_000,
      agentTtlMs: h.ctx.limits.leaseMs * 10,
    });
    await reaper.tick();
    await reaper.stop();

    const claimed = await agent.claim(['a1']);
    expect(claimed).toMatchObject({ assignments: [], clean: [agent.deviceIds.get('a1')] });
    expect((await h.ctx.store.devices.findById(agent.deviceIds.get('a1')!))!.state).toBe('CLEANING');
    await agent.post(`/devices/${agent.deviceIds.get('a1')}/cleaned`, { ok: true, report: 'clean' });
    const retry = await agent.claim(['a1']);
    expect(retry.assignments).toHaveLength(1);
    expect(retry.assignments[0]!.deviceRunId).not.toBe(lost.assignments[0]!.deviceRunId);
    expect((await agent.claim(['a2'])).clean).toEqual([]); // a device that is really free is left alone
    const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
    // The retry replaces the lost session in the run's list; the lost one stays readable by id.
    expect(
      sessions.body.data.map((s: { state: string; retryState: string }) => [s.state, s.retryState]).sort(),
    ).toEqual([['RUNNING', 'AUTO']]);
    const replaced = await alice.call('GET', `/api/v2/device-sessions/${lost.assignments[0]!.deviceRunId}`, {
      json: true,
    });
    expect(replaced.body).toMatchObject({ state: 'WARNING', retryState: 'NONE' });
  });

  it('never starts two device runs of a SERIAL run, or a SINGLE run twice, and finishes runs once, however many devices report at once', async () => {
    const many = Array.from({ length: 8 }, (_, i) => androidDevice(`m${i}`, `Phone ${i}`));
    const hosts = await Promise.all(
      many.map(async (device) => {
        const host = await fakeAgent(h.app, h.ctx, `host-${device.serial}`);
        await host.hello([device]);
        await host.cleanAll();
        return { host, serial: device.serial };
      }),
    );
    const deviceIds = hosts.map(({ host, serial }) => host.deviceIds.get(serial)!);
    for (const scheduler of ['SERIAL', 'SINGLE']) {
      const run = await start({
        frameworkId: CRAWLER,
        projectName: scheduler,
        files: [{ id: app.id }],
        deviceIds,
        scheduler,
      });
      const answers = await Promise.all(hosts.map(({ host, serial }) => host.claim([serial])));
      expect(
        answers.flatMap((answer) => answer.assignments),
        scheduler,
      ).toHaveLength(1);
      const sessions = await alice.call('GET', `/api/v2/runs/${run.id}/device-sessions`, { json: true });
      const states = sessions.body.data.map((s: { state: string }) => s.state);
      expect(
        states.filter((state: string) => state === 'RUNNING'),
        scheduler,
      ).toHaveLength(1);
      expect(
        states.filter((state: string) => state === (scheduler === 'SERIAL' ? 'WAITING' : 'EXCLUDED')),
        scheduler,
      ).toHaveLength(7);
      const taken = answers.findIndex((answer) => answer.assignments.length === 1);
      const { host, serial } = hosts[taken]!;
      await host.finish(answers[taken]!.assignments[0]!.deviceRunId, 'SUCCEEDED');
      await host.post(`/devices/${host.deviceIds.get(serial)}/cleaned`, { ok: true, report: 'clean' });
      if (scheduler === 'SERIAL') await alice.call('POST', `/api/v2/runs/${run.id}/abort`, { json: true });
    }

    // Device runs of one run ending all at once still finish the run, exactly once.
    const parallel = await start({
      frameworkId: CRAWLER,
      projectName: 'PARALLEL',
      files: [{ id: app.id }],
      deviceIds,
      hookURL: 'https://ci.example.com/hook',
    });
    const claimed = await Promise.all(hosts.map(({ host, serial }) => host.claim([serial])));
    expect(claimed.flatMap((answer) => answer.assignments)).toHaveLength(8);
    await Promise.all(
      claimed.map((answer, index) => hosts[index]!.host.finish(answer.assignments[0]!.deviceRunId, 'SUCCEEDED')),
    );
    const finished = await alice.call('GET', `/api/v2/runs/${parallel.id}`, { json: true });
    expect(finished.body).toMatchObject({ state: 'FINISHED', succeededDeviceCount: 8 });
    expect(await h.ctx.store.hooks.ofRun(parallel.id)).toHaveLength(1);
  });
});
