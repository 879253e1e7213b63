/**
 * The servers remember the agent tokens they verified (services/agent-tokens.ts,
 * docs/security.md#agent-tokens): played as the attacker who kept an agent's old token after the
 * operator replaced it. The old token stops at once on the server that heard of the new one (all
 * servers of one PostgreSQL), and within AGENT_TOKEN_CACHE_MS on a server that did not.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_TOKEN_CACHE_MS } from '../../src/services/agent-tokens.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { memoryNotifier } from '../../src/store/notifier.ts';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { type Harness, call, createHarness } from '../support/harness.ts';
import { type CloudServer, postgresServers } from '../support/postgres-servers.ts';

const ping = async (app: FastifyInstance, token: string) =>
  (await call(app, 'GET', '/agent/v1/ping', { headers: { authorization: `Bearer ${token}` } })).status;

const tokenLookups = (h: Harness) => h.queries.filter((sql) => /from "agents" where "token_hash"/.test(sql)).length;

describe.each(ENGINES)('agent tokens a server remembers (%s)', (engine) => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness(engine);
  });
  afterEach(async () => h.close());

  it('looks a working token up once, and never remembers a wrong one', async () => {
    const { token } = await issueAgentToken(h.ctx, 'host-1');
    const before = tokenLookups(h);
    for (let index = 0; index < 5; index++) expect(await ping(h.app, token)).toBe(200);
    expect(tokenLookups(h) - before).toBe(1);
    const wrong = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    for (let index = 0; index < 3; index++) expect(await ping(h.app, wrong)).toBe(401);
    expect(tokenLookups(h) - before).toBe(4);
    // It is looked up again once its time is up.
    h.advance(AGENT_TOKEN_CACHE_MS);
    expect(await ping(h.app, token)).toBe(200);
    expect(tokenLookups(h) - before).toBe(5);
  });

  it('refuses a replaced token at once, although it was verified a moment ago', async () => {
    const { token: old } = await issueAgentToken(h.ctx, 'host-1');
    expect(await ping(h.app, old)).toBe(200);
    const { token } = await issueAgentToken(h.ctx, 'host-1');
    expect(await ping(h.app, old)).toBe(401);
    expect(await ping(h.app, token)).toBe(200);
  });

  it('refuses a token replaced by another process once AGENT_TOKEN_CACHE_MS are over', async () => {
    const { token: old } = await issueAgentToken(h.ctx, 'host-1');
    expect(await ping(h.app, old)).toBe(200);
    // `devicecloud admin create-agent-token` runs in a process of its own: this server hears nothing.
    const { token } = await issueAgentToken({ ...h.ctx, notifier: memoryNotifier() }, 'host-1');
    expect(await ping(h.app, token)).toBe(200);
    h.advance(AGENT_TOKEN_CACHE_MS - 1);
    expect(await ping(h.app, old)).toBe(200);
    h.advance(1);
    expect(await ping(h.app, old)).toBe(401);
    expect(await ping(h.app, token)).toBe(200);
  });
});

describe.runIf(ENGINES.includes('postgres'))('agent tokens across two servers on PostgreSQL', () => {
  let h: Harness;
  let servers: CloudServer[];

  beforeAll(async () => {
    h = await createHarness('postgres');
    servers = await postgresServers(h, 2);
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await h.close();
  });

  it('refuses a token replaced through one server on the other one too, without waiting for its time', async () => {
    const [a, b] = servers as [CloudServer, CloudServer];
    const { token: old } = await issueAgentToken({ ...h.ctx, notifier: a.notifier }, 'host-1');
    expect(await ping(b.app, old)).toBe(200);
    await issueAgentToken({ ...h.ctx, notifier: a.notifier }, 'host-1');
    // The harness clock stands still: only the notification can make server B look again.
    await until(
      () => ping(b.app, old),
      (status) => status === 401,
      10_000,
    );
    expect(await ping(a.app, old)).toBe(401);
  });
});
