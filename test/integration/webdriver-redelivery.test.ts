/**
 * A command the agent's poll took but never received is taken again by its next poll
 * (services/webdriver-agent.ts giveBackCommands): here the database fails after the poll took an
 * interactive session's input, and the user's input still reaches the device. Before, the
 * command stayed TAKEN and the user's request waited ten minutes for an answer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent } from '../support/fake-agent.ts';
import { type Harness, createHarness } from '../support/harness.ts';

describe.each(ENGINES)('WebDriver commands a poll could not deliver (%s)', (engine) => {
  let h: Harness;
  afterEach(async () => h.close());

  async function session() {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    const alice = await h.user({ plan: 'GOLD' });
    const agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8', ['interactive'])]);
    await agent.cleanAll();
    const created = await alice.call('POST', '/api/me/device-sessions', {
      json: true,
      form: { deviceId: String(agent.deviceIds.get('a1')) },
    });
    expect(created.status, created.text).toBe(201);
    const claimed = await agent.claim(['a1']);
    const deviceRunId = claimed.assignments[0]!.deviceRunId;
    return { alice, agent, deviceRunId, id: created.body.id as number };
  }

  const poll = (agent: FakeAgent, deviceRunId: number) =>
    agent.post(`/device-runs/${deviceRunId}/webdriver/commands`, { waitMs: 0 });

  it('the database fails after the poll took an input: the next poll takes it again, and the input is done', async () => {
    const { alice, agent, deviceRunId, id } = await session();
    const input = alice.call('POST', `/api/me/device-sessions/${id}/input`, {
      json: true,
      form: { action: 'key', key: 'home' },
    });
    await until(
      async () => (await h.ctx.store.webDriver.commands(deviceRunId, 0, 10)).rows,
      (rows) => rows.some((row) => row.state === 'PENDING'),
      10_000,
    );

    const store = h.ctx.store.webDriver;
    const sessionOf = store.sessionOfDeviceRun;
    store.sessionOfDeviceRun = async () => {
      store.sessionOfDeviceRun = sessionOf;
      throw new Error('the database went away');
    };
    const failed = await poll(agent, deviceRunId);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(store.sessionOfDeviceRun).toBe(sessionOf);

    const again = await poll(agent, deviceRunId);
    expect(again.status, again.text).toBe(200);
    expect(again.body.commands).toHaveLength(1);
    const command = again.body.commands[0];
    expect(command.path).toMatch(/\/key$/);
    const answered = await agent.post(`/device-runs/${deviceRunId}/webdriver/answers`, {
      commandId: command.id,
      status: 200,
      body: '{"value":null}',
    });
    expect(answered.status, answered.text).toBe(200);
    expect((await input).status).toBe(200);
    expect((await poll(agent, deviceRunId)).body.commands).toEqual([]);
  });
});
