import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deliverDueHooks, HOOK_MAX_ATTEMPTS } from '../../src/scheduler/hooks.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';

const SERVER_SIDE = 7;

/** A CI endpoint on loopback that answers with the given statuses in turn, recording each POST. */
async function endpoint(statuses: number[]) {
  const received: Array<{ contentType: string | undefined; form: Record<string, string> }> = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ contentType: request.headers['content-type'], form: Object.fromEntries(new URLSearchParams(body)) });
      response.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe.each(ENGINES)('run-finished hooks (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let files: Array<{ id: number; action: string }>;
  const logged: string[] = [];
  const deliver = () => deliverDueHooks({ ctx: h.ctx, log: (line) => logged.push(line) });

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    alice = await h.user({ plan: 'GOLD' });
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8')]);
    await agent.cleanAll();
    const app = await fixtures.file(h.ctx, alice.user, { name: 'app.apk', inputType: 'APPLICATION', osType: 'ANDROID', properties: { package_name: 'com.example' } });
    const tests = await fixtures.file(h.ctx, alice.user, { name: 'tests.zip', inputType: 'TEST', properties: { entry_script: 'run-tests.sh' } });
    files = [{ id: app.id, action: 'INSTALL' }, { id: tests.id, action: 'RUN_TEST' }];
    logged.length = 0;
  });
  afterEach(async () => h.close());

  async function runToEnd(hookURL: string, result: 'SUCCEEDED' | 'FAILED') {
    const run = await alice.call('POST', '/api/v2/runs', { json: true, body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Hooked', files, hookURL } });
    expect(run.status, run.text).toBe(201);
    const { assignments } = await agent.claim(['a1']);
    await agent.finish(assignments[0]!.deviceRunId, result, [testCase('t', result === 'SUCCEEDED' ? 'PASSED' : 'FAILED')]);
    await agent.cleanAll();
    return run.body as { id: number; projectId: number };
  }

  it('posts testRunId, projectId and status as a form once the run finishes, retrying with backoff', async () => {
    const ci = await endpoint([503]);
    try {
      const run = await runToEnd(ci.url, 'FAILED');
      // The run is FINISHED whatever the hook does.
      expect((await alice.call('GET', `/api/v2/runs/${run.id}`, { json: true })).body.state).toBe('FINISHED');
      expect(await deliver()).toBe(0);
      expect(ci.received).toHaveLength(1);
      expect(ci.received[0]).toEqual({
        contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
        form: { testRunId: String(run.id), projectId: String(run.projectId), status: 'FINISHED', result: 'FAILED' },
      });
      expect(logged[0]).toMatch(/hook for run \d+ to http:\/\/127\.0\.0\.1:\d+: answered 503; retrying in 2 s/);
      expect(await deliver()).toBe(0); // not due yet
      h.advance(2001);
      expect(await deliver()).toBe(1);
      expect(ci.received).toHaveLength(2);
      expect(await h.ctx.store.hooks.ofRun(run.id)).toEqual([{ status: 'DELIVERED', attempts: 2, lastError: null }]);
      expect(await deliver()).toBe(0); // delivered once only
    } finally {
      await ci.close();
    }
  });

  it(`gives up after ${HOOK_MAX_ATTEMPTS} attempts on an endpoint that never answers well`, async () => {
    const ci = await endpoint(Array(HOOK_MAX_ATTEMPTS).fill(500));
    try {
      const run = await runToEnd(ci.url, 'SUCCEEDED');
      for (let attempt = 0; attempt < HOOK_MAX_ATTEMPTS + 2; attempt++) {
        await deliver();
        h.advance(10 * 60_000);
      }
      expect(ci.received).toHaveLength(HOOK_MAX_ATTEMPTS);
      expect(ci.received.every((post) => post.form.result === 'SUCCEEDED')).toBe(true);
      expect(await h.ctx.store.hooks.ofRun(run.id)).toEqual([{ status: 'FAILED', attempts: HOOK_MAX_ATTEMPTS, lastError: 'answered 500' }]);
      expect(logged.at(-1)).toContain('giving up');
    } finally {
      await ci.close();
    }
  });

  it('sends nothing for a run without a hookURL, or with an empty one', async () => {
    const quiet = await runToEnd('', 'SUCCEEDED');
    const plain = await alice.call('POST', '/api/v2/runs', { json: true, body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Quiet', files } });
    const { assignments } = await agent.claim(['a1']);
    await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED');
    expect((await alice.call('GET', `/api/v2/runs/${plain.body.id}`, { json: true })).body.state).toBe('FINISHED');
    expect(await deliver()).toBe(0);
    expect(await h.ctx.store.hooks.ofRun(quiet.id)).toEqual([]);
    expect(await h.ctx.store.hooks.ofRun(plain.body.id)).toEqual([]);
  });
});
