/** The recorder tool (docs/api.md#recorder-tool): 30 steps without authorization, unlimited with one, one authorization per account. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

describe.each(ENGINES)('recorder tool (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  beforeEach(async () => {
    h = await createHarness(engine);
    alice = await h.user();
  });
  afterEach(async () => h.close());

  const start = async (body: Record<string, unknown> = {}) => {
    const answer = await alice.call('POST', '/api/me/recordings', {
      json: true,
      body: { name: 'Sign-in flow', osType: 'ANDROID', ...body },
    });
    expect(answer.status, answer.text).toBe(201);
    return answer.body;
  };
  const step = (id: number, n: number) =>
    alice.call('POST', `/api/me/recordings/${id}/steps`, {
      json: true,
      body: { action: 'TAP', target: `button-${n}` },
    });
  const record = async (id: number, count: number, from = 1) => {
    for (let n = from; n < from + count; n++) expect((await step(id, n)).status).toBe(201);
  };

  it('cuts an unauthorized recording at 30 steps with a clear error, keeping the 30', async () => {
    const recording = await start();
    expect(recording).toMatchObject({ state: 'RECORDING', authorized: false, stepLimit: 30, stepCount: 0 });
    await record(recording.id, 30);
    const cut = await step(recording.id, 31);
    expect(cut.status).toBe(403);
    expect(cut.body.message).toContain('limited to 30 steps');
    expect(cut.body.message).toContain('/api/me/recorder/authorizations');
    const xml = await alice.call('POST', `/api/me/recordings/${recording.id}/steps`, {
      body: { action: 'TAP' },
      headers: { accept: 'application/xml' },
    });
    expect(xml.status).toBe(409);
    expect(xml.text).toContain('<apiExceptionMessage>');
    expect((await alice.call('GET', `/api/me/recordings/${recording.id}`, { json: true })).body).toMatchObject({
      state: 'CUT',
      stepCount: 30,
    });
    const steps = await alice.call('GET', `/api/me/recordings/${recording.id}/steps`, { json: true });
    expect(steps.body.data).toHaveLength(30);
    expect(steps.body.data[29]).toMatchObject({ position: 30, action: 'TAP', target: 'button-30' });
  });

  it('records without a limit under the current authorization; a second authorization ends the first', async () => {
    const first = await alice.call('POST', '/api/me/recorder/authorizations', { json: true });
    expect(first.status).toBe(201);
    expect(first.body.token).toMatch(/^rec_/);
    const authorized = await start({ authorizationToken: first.body.token });
    expect(authorized).toMatchObject({ authorized: true, stepLimit: null });
    await record(authorized.id, 35);

    const second = await alice.call('POST', '/api/me/recorder/authorizations', { json: true });
    expect(second.status).toBe(201);
    expect((await alice.call('GET', '/api/me/recorder/authorizations/current', { json: true })).body).toMatchObject({
      id: second.body.id,
      endTime: null,
    });
    expect((await alice.call('GET', '/api/me/recorder/authorizations/current', { json: true })).text).not.toContain(
      second.body.token,
    );
    // The first machine's recording is past 30 steps and no longer authorized: cut at its next step.
    expect((await step(authorized.id, 36)).status).toBe(403);
    expect(
      (await alice.call('POST', '/api/me/recordings', { json: true, body: { authorizationToken: first.body.token } }))
        .status,
    ).toBe(403);

    const current = await start({ authorizationToken: second.body.token });
    await record(current.id, 31);
    expect((await alice.call('POST', `/api/me/recordings/${current.id}/finish`, { json: true })).body).toMatchObject({
      state: 'FINISHED',
      stepCount: 31,
    });
    expect((await step(current.id, 32)).status).toBe(409);

    expect((await alice.call('DELETE', '/api/me/recorder/authorizations/current', { json: true })).status).toBe(204);
    expect((await alice.call('GET', '/api/me/recorder/authorizations/current', { json: true })).status).toBe(404);
    const listed = await alice.call('GET', '/api/me/recordings', { json: true });
    expect(listed.body.data.map((r: { id: number; authorized: boolean }) => [r.id, r.authorized])).toEqual([
      [current.id, false],
      [authorized.id, false],
    ]);
  });

  it("refuses bad steps by name, and another account's token or recording", async () => {
    const recording = await start();
    for (const [body, field] of [
      [{}, 'action'],
      [{ action: 'FLY' }, 'action'],
      [{ action: 'TYPE', value: 'x'.repeat(5000) }, 'value'],
    ] as const) {
      const refused = await alice.call('POST', `/api/me/recordings/${recording.id}/steps`, { json: true, body });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain(field);
    }
    expect((await alice.call('POST', '/api/me/recordings', { json: true, body: { osType: 'WINDOWS' } })).status).toBe(
      400,
    );
    const bob = await h.user();
    const bobs = await bob.call('POST', '/api/me/recorder/authorizations', { json: true });
    expect(
      (await alice.call('POST', '/api/me/recordings', { json: true, body: { authorizationToken: bobs.body.token } }))
        .status,
    ).toBe(403);
    expect(
      (await bob.call('POST', `/api/me/recordings/${recording.id}/steps`, { json: true, body: { action: 'TAP' } }))
        .status,
    ).toBe(404);
    expect((await alice.call('GET', `/api/me/recordings/${recording.id}`, { json: true })).body.stepCount).toBe(0);
  });
});
