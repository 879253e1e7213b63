/**
 * What the agent-protocol tests (test/integration/agent-protocol*.test.ts) start from: a fresh
 * harness with a GOLD user, an agent of two Android phones and an iPhone, all clean, and the
 * user's app and test package.
 */
import { expect } from 'vitest';
import type { Engine } from './engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, iosDevice } from './fake-agent.ts';
import * as fixtures from './fixtures.ts';
import { type Harness, type TestUser, createHarness } from './harness.ts';

export const CRAWLER = 6;
export const SERVER_SIDE = 7;

export interface ProtocolWorld {
  readonly h: Harness;
  readonly alice: TestUser;
  readonly agent: FakeAgent;
  readonly app: { id: number };
  readonly tests: { id: number };
}

export async function protocolWorld(engine: Engine): Promise<ProtocolWorld> {
  const h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
  const alice = await h.user({ plan: 'GOLD' });
  const agent = await fakeAgent(h.app, h.ctx, 'host-1');
  await agent.hello([androidDevice('a1', 'Pixel 8'), androidDevice('a2', 'Galaxy S24'), iosDevice('i1', 'iPhone 15')]);
  await agent.cleanAll();
  const app = await fixtures.file(h.ctx, alice.user, {
    name: 'app.apk',
    inputType: 'APPLICATION',
    osType: 'ANDROID',
    properties: { package_name: 'com.example', min_sdk: '24' },
  });
  const tests = await fixtures.file(h.ctx, alice.user, {
    name: 'tests.zip',
    inputType: 'TEST',
    properties: { entry_script: 'run-tests.sh' },
  });
  return { h, alice, agent, app, tests };
}

export async function publicAndroidGroup(alice: TestUser): Promise<number> {
  const groups = await alice.call('GET', '/api/me/device-groups?withPublic=true', { json: true });
  return groups.body.data.find((group: { displayName: string }) => group.displayName === 'All Android devices').id;
}

/** Starts a run as `alice`, expecting it to be accepted. */
export async function startRun(alice: TestUser, body: Record<string, unknown>) {
  const answer = await alice.call('POST', '/api/v2/runs', { json: true, body });
  expect(answer.status, answer.text).toBe(201);
  return answer.body;
}
