/**
 * Interactive sessions behind a load balancer (docs/api.md#interactive-sessions): two servers on
 * one PostgreSQL, each with its own LISTEN/NOTIFY connection. The agent talks to server A only,
 * the browser to server B only: every input crosses from B to A through the database and a
 * notification, and every frame the agent pushes to A reaches the viewer on B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { readFrames } from '../support/live-frames.ts';
import { type CloudServer, postgresServers } from '../support/postgres-servers.ts';
import { type VirtualAgent, startVirtualAgent } from '../support/virtual-host.ts';

describe.runIf(ENGINES.includes('postgres'))('interactive sessions across two servers on PostgreSQL', () => {
  let h: Harness;
  let servers: CloudServer[];
  let host: VirtualAgent;
  let alice: TestUser;
  let deviceId: number;

  beforeAll(async () => {
    h = await createHarness('postgres', { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    h.setTime(Date.now());
    servers = await postgresServers(h, 2);
    host = await startVirtualAgent(h, 'live-2', [servers[0]!.url.origin]);
    alice = await h.user({ plan: 'GOLD' });
    deviceId = host.deviceId;
  });
  afterAll(async () => {
    await host.stop();
    for (const server of servers) await server.stop();
    await h.close();
  });

  it('takes input and shows frames through the server the browser talks to, the agent on the other', async () => {
    const b = servers[1]!.url.origin;
    const auth = {
      authorization: `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}`,
      accept: 'application/json',
    };
    const post = async (suffix: string, body: Record<string, unknown>) =>
      fetch(`${b}/api/me/device-sessions${suffix}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const created = (await (await post('', { deviceId })).json()) as { id: number; state: string };
    expect(['WAITING', 'RUNNING']).toContain(created.state);
    await until(
      async () =>
        (
          (await (await fetch(`${b}/api/me/device-sessions/${created.id}`, { headers: auth })).json()) as {
            state: string;
          }
        ).state,
      (state) => state === 'RUNNING',
      20_000,
    );
    const keys: number[] = [];
    const frames = await readFrames(
      `${b}/api/me/device-sessions/${created.id}/live`,
      alice.key,
      (seen) => seen.length >= 3,
      async (seen) => {
        // Each frame asks for the next: a key that changes what the screen shows.
        const answer = await post(`/${created.id}/input`, {
          action: 'key',
          key: seen.length % 2 === 1 ? 'volumeUp' : 'volumeDown',
        });
        keys.push(answer.status);
      },
    );
    expect(frames).toHaveLength(3);
    expect(new Set(frames.map((frame) => frame.toString('base64'))).size).toBe(3);
    expect(keys.every((status) => status === 200)).toBe(true);
    expect((await post(`/${created.id}/release`, {})).status).toBe(200);
    await until(
      async () =>
        (
          (await (await fetch(`${b}/api/me/device-sessions/${created.id}`, { headers: auth })).json()) as {
            state: string;
          }
        ).state,
      (state) => state === 'SUCCEEDED',
      20_000,
    );
  });
});
