/**
 * A device at the failure limit is checked once before it stays out of service (issue 15): a real
 * agent, asked by the server, checks its health and cleans it FULL, and the device stays out when
 * the check fails. The protocol's side of the customer's faults: device-faults.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { type RunningAgent, startAgent } from '../../src/agent/agent.ts';
import type { Driver } from '../../src/agent/driver.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import { until } from '../support/cloud.ts';
import { androidDevice } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, createHarness } from '../support/harness.ts';

const CRAWLER = 6;

describe('the agent checks a device the server asks it to (sqlite)', () => {
  let h: Harness | undefined;
  let agent: RunningAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    h?.app.server.closeAllConnections();
    await h?.close();
  });

  it('checks its health and cleans it FULL after failures in a row, and it stays out when the check fails', async () => {
    h = await createHarness('sqlite', { flavour: 'public', limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    h.setTime(Date.now());
    const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { token } = await issueAgentToken(h.ctx, 'host-1');
    const calls: string[] = [];
    // It once hit its backstop in a loaded whole-suite run and passed alone every time: what the
    // agent said and what the driver was asked are where the next failure should be read.
    const agentLog: string[] = [];
    onTestFailed(() => {
      console.error(`[device-health-check] driver calls: ${calls.join(', ')}`);
      console.error(`[device-health-check] the agent's last lines:\n${agentLog.slice(-60).join('\n')}`);
    });
    let healthy = true;
    const driver: Driver = {
      name: 'flaky-host',
      listDevices: async () => [{ ...androidDevice('p1', 'Pixel 8'), executionKinds: ['crawler'] }],
      health: async () => {
        calls.push('health');
        return healthy ? { ok: true } : { ok: false, reason: 'the phone does not answer' };
      },
      execute: async () => ({
        outcome: 'INFRA_ERROR',
        failReason: 'the phone went away during the tests',
        testCases: null,
        exitCode: null,
        artifacts: [],
      }),
      clean: async (_serial, kind) => {
        calls.push(`clean ${kind}`);
        return { ok: true, report: 'clean' };
      },
      record: async () => ({ stop: async () => ({ file: null, reason: 'this host records nothing' }) }),
      missingTools: () => [],
      close: async () => undefined,
    };
    agent = startAgent({
      serverUrls: [url],
      token,
      driver,
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-check-')),
      log: (line) => agentLog.push(line),
    });
    await agent.ready;
    const harness = h;
    const row = () =>
      harness.database.db.selectFrom('devices').select(['id', 'state', 'state_reason']).executeTakeFirstOrThrow();
    await until(
      row,
      (device) => device.state === 'IDLE',
      30_000,
      () => calls.length,
    );
    const alice = await harness.user();
    const app = await fixtures.file(harness.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
    const run = async () => {
      const started = await alice.call('POST', '/api/v2/runs', {
        json: true,
        body: { frameworkId: CRAWLER, projectName: 'P', files: [{ id: app.id }], deviceIds: [(await row()).id] },
      });
      expect(started.status, started.text).toBe(201);
      agentLog.push(`[test] run ${started.body.id} started`);
      await until(
        async () => (await alice.call('GET', `/api/v2/runs/${started.body.id}`, { json: true })).body.state,
        (state) => state === 'FINISHED',
        30_000,
        () => calls.length,
      );
      return until(
        row,
        (device) => device.state === 'IDLE' || device.state === 'NOT_OPERATIONAL',
        30_000,
        () => calls.length,
      );
    };
    const cleanings = () => calls.filter((call) => call.startsWith('clean'));
    await run();
    await run();
    expect(cleanings()).toEqual(['clean LIGHT', 'clean LIGHT', 'clean LIGHT']);
    calls.length = 0;
    // The third in a row: checked (health, then a FULL cleaning, though the public cloud cleans LIGHT), and back in service.
    expect((await run()).state).toBe('IDLE');
    expect(cleanings()).toEqual(['clean FULL']);
    expect(calls.lastIndexOf('health', calls.indexOf('clean FULL'))).toBeGreaterThanOrEqual(0);
    // Failing again: out of service.
    expect(await run()).toMatchObject({
      state: 'NOT_OPERATIONAL',
      state_reason: expect.stringContaining('again after an automatic health check'),
    });

    // Returned by an operator while the phone still does not answer: the check fails, it stays out.
    healthy = false;
    calls.length = 0;
    const operator = await harness.user({ role: 'ADMIN' });
    expect(
      (
        await operator.call('POST', `/api/admin/devices/${(await row()).id}/return-to-service`, {
          json: true,
          body: {},
        })
      ).status,
    ).toBe(200);
    // Under load the agent's next heartbeat, then its check, may take seconds: its calls are progress.
    const out = await until(
      row,
      (device) => device.state === 'NOT_OPERATIONAL',
      30_000,
      () => calls.length,
    );
    expect(out.state_reason).toBe('cleaning failed: health check failed: the phone does not answer');
    expect(calls).not.toContain('clean FULL');
  }, 180_000); // a backstop: the waits above give up when nothing moves
});
