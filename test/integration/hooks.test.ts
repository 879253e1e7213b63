import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Resolve } from '../../src/jobs/hook-sender.ts';
import { deliverDueHooks, HOOK_MAX_ATTEMPTS } from '../../src/jobs/hooks.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness, parseXml } from '../support/harness.ts';

const SERVER_SIDE = 7;

/** A CI endpoint on loopback that answers with the given statuses in turn, recording each POST. */
async function endpoint(statuses: number[], headers: Record<string, string> = {}, host = '127.0.0.1', port = 0) {
  const received: Array<{ contentType: string | undefined; form: Record<string, string> }> = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({
        contentType: request.headers['content-type'],
        form: Object.fromEntries(new URLSearchParams(body)),
      });
      response.writeHead(statuses.shift() ?? 200, headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const listening = (server.address() as AddressInfo).port;
  return {
    port: listening,
    url: `http://${host}:${listening}/hook`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A resolver for names the tests make up; every other name is not found. */
function resolver(names: Record<string, string[]>, asked: string[] = []): Resolve {
  return (hostname, callback) => {
    asked.push(hostname);
    const addresses = names[hostname];
    if (addresses === undefined)
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
}

/** A user with an app and a test package, and an agent with one idle phone; hooks may reach `allowed` networks. */
async function world(engine: (typeof ENGINES)[number], allowed: string[]) {
  const h = await createHarness(engine, { limits: { claimWaitMs: 50, hookAllowNetworks: allowed } });
  const alice = await h.user({ plan: 'GOLD' });
  const agent = await fakeAgent(h.app, h.ctx, 'host-1');
  await agent.hello([androidDevice('a1', 'Pixel 8')]);
  await agent.cleanAll();
  const app = await fixtures.file(h.ctx, alice.user, {
    name: 'app.apk',
    inputType: 'APPLICATION',
    osType: 'ANDROID',
    properties: { package_name: 'com.example' },
  });
  const tests = await fixtures.file(h.ctx, alice.user, {
    name: 'tests.zip',
    inputType: 'TEST',
    properties: { entry_script: 'run-tests.sh' },
  });
  const files = [
    { id: app.id, action: 'INSTALL' },
    { id: tests.id, action: 'RUN_TEST' },
  ];
  return { h, alice, agent, files };
}

// These endpoints are on loopback, which hooks may reach only when the operator allows it.
describe.each(ENGINES)('run-finished hooks, loopback allowed by the operator (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let files: Array<{ id: number; action: string }>;
  const logged: string[] = [];
  const deliver = () => deliverDueHooks({ ctx: h.ctx, log: (line) => logged.push(line) });

  beforeEach(async () => {
    ({ h, alice, agent, files } = await world(engine, ['127.0.0.0/8']));
    logged.length = 0;
  });
  afterEach(async () => h.close());

  async function runToEnd(hookURL: string, result: 'SUCCEEDED' | 'FAILED') {
    const run = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Hooked', files, hookURL },
    });
    expect(run.status, run.text).toBe(201);
    const { assignments } = await agent.claim(['a1']);
    await agent.finish(assignments[0]!.deviceRunId, result, [
      testCase('t', result === 'SUCCEEDED' ? 'PASSED' : 'FAILED'),
    ]);
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
      expect(await h.ctx.store.hooks.ofRun(run.id)).toEqual([
        { status: 'FAILED', attempts: HOOK_MAX_ATTEMPTS, lastError: 'answered 500' },
      ]);
      expect(logged.at(-1)).toContain('giving up');
    } finally {
      await ci.close();
    }
  });

  it('sends nothing for a run without a hookURL, or with an empty one', async () => {
    const quiet = await runToEnd('', 'SUCCEEDED');
    const plain = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Quiet', files },
    });
    const { assignments } = await agent.claim(['a1']);
    await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED');
    expect((await alice.call('GET', `/api/v2/runs/${plain.body.id}`, { json: true })).body.state).toBe('FINISHED');
    expect(await deliver()).toBe(0);
    expect(await h.ctx.store.hooks.ofRun(quiet.id)).toEqual([]);
    expect(await h.ctx.store.hooks.ofRun(plain.body.id)).toEqual([]);
  });

  it('resolves names with the system resolver, connecting to the allowed addresses', async () => {
    const ci = await endpoint([]);
    try {
      const run = await runToEnd(`http://localhost:${ci.port}/hook`, 'SUCCEEDED');
      expect(await deliver()).toBe(1);
      expect(ci.received).toHaveLength(1);
      expect(await h.ctx.store.hooks.ofRun(run.id)).toEqual([{ status: 'DELIVERED', attempts: 1, lastError: null }]);
    } finally {
      await ci.close();
    }
  });

  it('does not follow redirects', async () => {
    const elsewhere = await endpoint([]);
    const ci = await endpoint([302, 302], { location: elsewhere.url });
    try {
      const run = await runToEnd(ci.url, 'SUCCEEDED');
      expect(await deliver()).toBe(0);
      expect(ci.received).toHaveLength(1);
      expect(elsewhere.received).toHaveLength(0);
      expect(await h.ctx.store.hooks.ofRun(run.id)).toEqual([
        { status: 'PENDING', attempts: 1, lastError: 'answered 302' },
      ]);
    } finally {
      await ci.close();
      await elsewhere.close();
    }
  });
});

describe.each(ENGINES)('run-finished hooks to internal addresses, refused by default (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let agent: FakeAgent;
  let files: Array<{ id: number; action: string }>;
  let inside: Awaited<ReturnType<typeof endpoint>>;
  const logged: string[] = [];

  beforeEach(async () => {
    ({ h, alice, agent, files } = await world(engine, []));
    logged.length = 0;
    // What an attacker aims at: a service listening on the server's loopback.
    inside = await endpoint([]);
  });
  afterEach(async () => {
    await inside.close();
    await h.close();
  });

  const startRun = (hookURL: string, json = true) =>
    alice.call('POST', '/api/v2/runs', {
      json,
      body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Hooked', files, hookURL },
    });

  async function runToEnd(hookURL: string) {
    const run = await startRun(hookURL);
    expect(run.status, run.text).toBe(201);
    const { assignments } = await agent.claim(['a1']);
    await agent.finish(assignments[0]!.deviceRunId, 'SUCCEEDED');
    await agent.cleanAll();
    return run.body as { id: number; projectId: number };
  }

  it('answers a run start whose hookURL is an internal address with 400 naming hookURL, in either format, starting nothing', async () => {
    const urls = [
      inside.url,
      `http://2130706433:${inside.port}/`,
      `http://0x7f.1:${inside.port}/`,
      `http://0177.0.0.1:${inside.port}/`,
      `http://[::ffff:127.0.0.1]:${inside.port}/`,
      `http://[::1]:${inside.port}/`,
      `http://localhost:${inside.port}/`,
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://127.0.0.1:5432/',
      'http://10.1.2.3/hook',
      'http://[fd00:ec2::254]/',
    ];
    for (const url of urls) {
      const json = await startRun(url);
      expect(json.status, url).toBe(400);
      expect(json.body.message, url).toMatch(/^Parameter 'hookURL' points at .*--hook-allow-networks/);
      const xml = await startRun(url, false);
      expect(xml.status, url).toBe(400);
      expect(parseXml(xml.text).apiExceptionMessage.message).toContain("Parameter 'hookURL'");
    }
    expect((await alice.call('GET', '/api/me/projects', { json: true })).body.total).toBe(0);
    expect(inside.received).toHaveLength(0);
  });

  it('refuses an internal hookURL in a project config too', async () => {
    const project = await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Legacy' } });
    const answer = await alice.call('POST', `/api/v2/projects/${project.body.id}/config`, {
      json: true,
      form: { hookURL: `http://127.1:${inside.port}/` },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/^Parameter 'hookURL' points at 127\.0\.0\.1, a loopback address/);
  });

  it('refuses at send time a name that resolves to an internal address, sending nothing and giving up at once', async () => {
    const asked: string[] = [];
    const deliver = () =>
      deliverDueHooks({
        ctx: h.ctx,
        log: (line) => logged.push(line),
        resolve: resolver({ 'ci.example.test': ['127.0.0.1'] }, asked),
      });
    const run = await runToEnd(`http://ci.example.test:${inside.port}/hook`);
    expect(await deliver()).toBe(0);
    expect(asked).toEqual(['ci.example.test']);
    expect(inside.received).toHaveLength(0);
    expect(await h.ctx.store.hooks.ofRun(run.id)).toEqual([
      {
        status: 'FAILED',
        attempts: 1,
        lastError: 'refused: ci.example.test resolves to 127.0.0.1, a loopback address',
      },
    ]);
    expect(logged).toEqual([
      `hook for run ${run.id} to http://ci.example.test:${inside.port}: refused: ci.example.test resolves to 127.0.0.1, a loopback address; giving up`,
    ]);
    h.advance(60 * 60_000);
    expect(await deliver()).toBe(0);
    expect(asked).toHaveLength(1);
    expect(inside.received).toHaveLength(0);
  });

  it('refuses at send time an internal address already in the outbox (queued before the rules)', async () => {
    const run = await runToEnd('');
    await h.ctx.store.hooks.enqueue(run.id, inside.url, h.ctx.clock());
    expect(await deliverDueHooks({ ctx: h.ctx, log: (line) => logged.push(line) })).toBe(0);
    expect(inside.received).toHaveLength(0);
    expect(await h.ctx.store.hooks.ofRun(run.id)).toEqual([
      { status: 'FAILED', attempts: 1, lastError: 'refused: 127.0.0.1 is a loopback address' },
    ]);
  });

  it('connects only to the address it checked, whatever the name resolves to next (DNS rebinding)', async () => {
    // The operator allows one loopback address, 127.0.0.2, for its own CI; 127.0.0.1 stays internal.
    const outside = await endpoint([], {}, '127.0.0.2', inside.port);
    try {
      const ctx = { ...h.ctx, limits: { ...h.ctx.limits, hookAllowNetworks: ['127.0.0.2/32'] } };
      const answers = [['127.0.0.1', '127.0.0.2'], ['127.0.0.1']];
      const asked: string[] = [];
      // A name whose answers change between lookups, as a rebinding attacker's DNS server does.
      const rebinding: Resolve = (hostname, callback) =>
        resolver({ [hostname]: answers[Math.min(asked.length, answers.length - 1)]! }, asked)(hostname, callback);
      const deliver = () => deliverDueHooks({ ctx, log: (line) => logged.push(line), resolve: rebinding });
      const first = await runToEnd(`http://rebind.example.test:${inside.port}/hook`);
      expect(await deliver()).toBe(1);
      expect(asked).toHaveLength(1);
      expect(outside.received).toHaveLength(1);
      expect(inside.received).toHaveLength(0);
      const second = await runToEnd(`http://rebind.example.test:${inside.port}/hook`);
      expect(await deliver()).toBe(0);
      expect(inside.received).toHaveLength(0);
      expect(await h.ctx.store.hooks.ofRun(first.id)).toEqual([{ status: 'DELIVERED', attempts: 1, lastError: null }]);
      expect(await h.ctx.store.hooks.ofRun(second.id)).toEqual([
        {
          status: 'FAILED',
          attempts: 1,
          lastError: 'refused: rebind.example.test resolves to 127.0.0.1, a loopback address',
        },
      ]);
    } finally {
      await outside.close();
    }
  });
});
