/**
 * The harness lends one built app from test to test of a file (test/support/app-pool.ts): each
 * harness still sees only its own store, clock and limits, and an app that may hold something of
 * its test (a request not finished, a listening port) is closed rather than lent again.
 */
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.ts';
import { androidDevice, fakeAgent } from '../support/fake-agent.ts';
import { call, createHarness } from '../support/harness.ts';
import { until } from '../support/until.ts';

describe.each(ENGINES)('apps lent from harness to harness (%s)', (engine) => {
  it("gives the next harness the same app, answering from that harness's store, clock and limits", async () => {
    const first = await createHarness(engine);
    const alice = await first.user({ email: 'alice@example.com' });
    expect((await alice.call('GET', '/api/me', { json: true })).body.email).toBe('alice@example.com');
    await first.close();

    const second = await createHarness(engine, { limits: { maxUploadBytes: 10 } });
    try {
      expect(second.app === first.app).toBe(true);
      // Alice was in the first harness's store only.
      expect((await call(second.app, 'GET', '/api/me', { key: alice.key, json: true })).status).toBe(401);
      const bob = await second.user({ email: 'bob@example.com' });
      expect((await bob.call('GET', '/api/me', { json: true })).body.email).toBe('bob@example.com');
      second.setTime(Date.UTC(2030, 0, 1));
      const projects = await bob.call('POST', '/api/me/projects', { json: true, form: { name: 'P' } });
      expect(projects.body.createTime).toBe(Date.UTC(2030, 0, 1));
      expect(second.ctx.limits.maxUploadBytes).toBe(10);
    } finally {
      await second.close();
    }
  });

  it('builds a new app when the last one still had a request in flight, or listened', async () => {
    const polling = await createHarness(engine, { limits: { claimWaitMs: 60_000 } });
    const agent = await fakeAgent(polling.app, polling.ctx, 'host-1');
    await agent.hello([androidDevice('a1')]);
    await agent.cleanAll();
    let claimed = false;
    const before = polling.queries.length;
    const claim = agent.post('/claims', { deviceIds: [...agent.deviceIds.values()], running: [], waitMs: 60_000 });
    const answered = () => {
      claimed = true;
    };
    void claim.then(answered, answered);
    // The claim is being answered: it has looked in the store (and then waits, no run being queued).
    await until(
      () => polling.queries.length,
      (count) => count > before,
    );
    expect(claimed).toBe(false);
    await polling.close();
    await claim.catch(() => undefined);
    expect(claimed).toBe(true);

    const next = await createHarness(engine);
    expect(next.app === polling.app).toBe(false);
    await next.app.listen({ port: 0, host: '127.0.0.1' });
    await next.close();
    const after = await createHarness(engine);
    try {
      expect(after.app === next.app).toBe(false);
      expect(next.app.server.listening).toBe(false);
    } finally {
      await after.close();
    }
  });
});
