/**
 * The agent follows devices that appear on its host after it started (a phone plugged in): it
 * registers them on its next heartbeat and cleans them, and they take work, without a restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import type { DeviceDescription, Driver } from '../../src/agent/driver.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { until } from '../support/cloud.ts';
import { type Harness, call, createHarness } from '../support/harness.ts';

const phone = (serial: string, displayName: string): DeviceDescription => ({
  serial,
  displayName,
  manufacturer: 'Google',
  osType: 'ANDROID',
  platform: 'ANDROID',
  releaseVersion: '14',
  apiLevel: 34,
  executionKinds: ['server-side'],
});

/** A host whose phones the test plugs in; cleaning always succeeds, nothing runs. */
function hostWith(devices: DeviceDescription[]): Driver & { cleaned: string[] } {
  const cleaned: string[] = [];
  return {
    name: 'test-host',
    cleaned,
    listDevices: async () => [...devices],
    health: async () => ({ ok: true }),
    execute: async () => ({
      outcome: 'INFRA_ERROR',
      failReason: 'not in this test',
      testCases: null,
      exitCode: null,
      artifacts: [],
    }),
    clean: async (serial) => {
      cleaned.push(serial);
      return { ok: true, report: 'clean' };
    },
    record: async () => ({ stop: async () => ({ file: null, reason: 'this host records nothing' }) }),
    missingTools: () => [],
    close: async () => undefined,
  };
}

describe('device discovery after the agent started', () => {
  let h: Harness;
  let agent: RunningAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    await h.close();
  });

  it('registers and cleans a phone plugged in later, which then shows as idle', async () => {
    h = await createHarness('sqlite', { limits: { heartbeatMs: 100, claimWaitMs: 100 } });
    // The agent's clock is real; the harness clock would make its heartbeats look ancient.
    h.setTime(Date.now());
    const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { token } = await issueAgentToken(h.ctx, 'host-1');
    const devices = [phone('serial-1', 'Pixel 8')];
    const driver = hostWith(devices);
    agent = startAgent({
      serverUrls: [url],
      token,
      driver,
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-discovery-')),
      log: () => undefined,
    });
    await agent.ready;
    const states = async () =>
      (await call(h.app, 'GET', '/api/v2/devices?sort=displayName_a', { json: true })).body.data.map(
        (d: { displayName: string; locked: boolean }) => [d.displayName, d.locked],
      );
    await until(states, (list) => JSON.stringify(list) === JSON.stringify([['Pixel 8', false]]), 10_000);

    devices.push(phone('serial-2', 'Galaxy S24'));
    await until(
      states,
      (list) =>
        JSON.stringify(list) ===
        JSON.stringify([
          ['Galaxy S24', false],
          ['Pixel 8', false],
        ]),
      10_000,
    );
    expect(driver.cleaned.filter((serial) => serial === 'serial-2')).toHaveLength(1);
  });
});
