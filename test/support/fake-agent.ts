/**
 * An agent that speaks the protocol through inject(), driven step by step by a test: it says
 * hello with the devices it is given, cleans, claims, reports. Protocol-level tests use it to
 * check the server's side without processes or drivers.
 */
import type { FastifyInstance } from 'fastify';
import type { DeviceReport, HelloResponse } from '../../src/protocol/v1.ts';
import { issueAgentToken } from '../../src/services/agents.ts';
import type { Context } from '../../src/services/context.ts';
import { type Answer, call } from './harness.ts';

export function androidDevice(
  serial: string,
  displayName = serial,
  executionKinds: DeviceReport['executionKinds'] = ['server-side', 'crawler'],
): DeviceReport {
  return {
    serial,
    displayName,
    manufacturer: 'Google',
    osType: 'ANDROID',
    platform: 'ANDROID',
    releaseVersion: '14',
    apiLevel: 34,
    executionKinds,
  };
}

export function iosDevice(serial: string, displayName = serial): DeviceReport {
  return {
    serial,
    displayName,
    manufacturer: 'Apple',
    osType: 'IOS',
    platform: 'IOS',
    releaseVersion: '17.4',
    apiLevel: null,
    executionKinds: ['server-side', 'crawler'],
  };
}

export interface FakeAgent {
  readonly token: string;
  /** deviceId by serial, after hello. */
  readonly deviceIds: Map<string, number>;
  post(path: string, body: unknown): Promise<Answer>;
  hello(devices: readonly DeviceReport[]): Promise<HelloResponse>;
  /** Reports every device clean (IDLE). */
  cleanAll(): Promise<void>;
  claim(
    serials: readonly string[],
    running?: readonly number[],
  ): Promise<{
    assignments: Array<{
      deviceRunId: number;
      deviceId: number;
      kind: string;
      files: Array<{ id: number; url: string; action: string }>;
      parameters: Record<string, string>;
      timeoutSeconds: number;
      deviceSettings: unknown;
    }>;
    abort: number[];
    clean: number[];
  }>;
  finish(deviceRunId: number, outcome: string, testCases?: unknown[], seq?: number): Promise<Answer>;
}

export async function fakeAgent(app: FastifyInstance, ctx: Context, name: string): Promise<FakeAgent> {
  const { token } = await issueAgentToken(ctx, name);
  const deviceIds = new Map<string, number>();
  const post = (path: string, body: unknown) =>
    call(app, 'POST', `/agent/v1${path}`, { body, json: true, headers: { authorization: `Bearer ${token}` } });
  const agent: FakeAgent = {
    token,
    deviceIds,
    post,
    async hello(devices) {
      const answer = await post('/hello', { protocol: 1, agentVersion: 'test', hostname: name, devices });
      if (answer.status !== 200) throw new Error(`hello: ${answer.status} ${answer.text}`);
      for (const { serial, deviceId } of answer.body.devices) deviceIds.set(serial, deviceId);
      return answer.body;
    },
    async cleanAll() {
      for (const deviceId of deviceIds.values()) {
        const answer = await post(`/devices/${deviceId}/cleaned`, { ok: true, report: 'clean' });
        if (answer.status !== 200) throw new Error(`cleaned: ${answer.status} ${answer.text}`);
      }
    },
    async claim(serials, running = []) {
      const answer = await post('/claims', {
        deviceIds: serials.map((serial) => deviceIds.get(serial)!),
        running,
        waitMs: 0,
      });
      if (answer.status !== 200) throw new Error(`claim: ${answer.status} ${answer.text}`);
      return answer.body;
    },
    finish(deviceRunId, outcome, testCases = [], seq = 1000) {
      return post(`/device-runs/${deviceRunId}/result`, { seq, outcome, failReason: null, testCases });
    },
  };
  return agent;
}

export function testCase(methodName: string, result: 'PASSED' | 'FAILED' | 'SKIPPED' = 'PASSED') {
  return {
    suiteName: 'Suite',
    className: 'com.example.SampleTest',
    methodName,
    duration: 12,
    result,
    errorMessage: result === 'FAILED' ? 'expected <1> but was <2>' : null,
    stacktrace:
      result === 'FAILED' ? 'java.lang.AssertionError: expected <1> but was <2>\n\tat com.example.SampleTest' : null,
  };
}
