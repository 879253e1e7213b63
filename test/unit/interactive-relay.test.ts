/**
 * The agent's end of an interactive session (src/agent/interactive-relay.ts) against a fake
 * server: inputs are done and answered (bad ones with a 400, refused ones with the device's
 * reason), frames are pushed only when the screen changed, and the session ends on release, on
 * its idle timeout and on its signal, each said as such.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProtocolClient } from '../../src/agent/client.ts';
import { type DeviceInput, InputRefused, type InteractiveDevice } from '../../src/agent/driver.ts';
import { interactiveResult, serveInteractive } from '../../src/agent/interactive-relay.ts';
import type { WebDriverCommandMessage } from '../../src/protocol/v1.ts';

function fakeServer(polls: Array<{ commands: WebDriverCommandMessage[]; ended: boolean }>) {
  const answers: Array<{ commandId: number; status: number; body: string }> = [];
  const frames: Buffer[] = [];
  const client = {
    async webdriverCommands(_id: number, waitMs: number, policy: { signal?: AbortSignal }) {
      const next = polls.shift();
      if (next !== undefined) return next;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        policy.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
      return { commands: [], ended: false };
    },
    async webdriverAnswer(_id: number, answer: { commandId: number; status: number; body: string }) {
      answers.push(answer);
      return { ok: true };
    },
    async frame(_id: number, png: Buffer) {
      frames.push(png);
      return { seq: frames.length, ended: false };
    },
  } as unknown as ProtocolClient;
  return { client, answers, frames };
}

/** A screen that is the count of inputs done: it changes with each. */
function countingDevice(): InteractiveDevice & { readonly done: DeviceInput[] } {
  const done: DeviceInput[] = [];
  return {
    done,
    frameIntervalMs: 10,
    async input(input) {
      if (input.action === 'tap' && input.x > 100) throw new InputRefused('off the screen');
      done.push(input);
      return input.action === 'screenshot' ? 'cG5n' : null;
    },
    async frame() {
      return Buffer.from(`frame ${done.length}`);
    },
  };
}

const command = (id: number, body: Record<string, unknown> | string): WebDriverCommandMessage => ({
  id,
  method: 'POST',
  path: `/interactive/${typeof body === 'string' ? 'x' : String(body.action)}`,
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

describe('the interactive relay', () => {
  const options = (client: ProtocolClient, idleMs: number, signal = new AbortController().signal) => ({
    client,
    deviceRunId: 7,
    signal,
    dir: fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-relay-')),
    log: () => undefined,
    patienceMs: 1000,
    idleMs,
  });

  it('does each input and answers it, pushes changed frames only, and ends when released', async () => {
    const { client, answers, frames } = fakeServer([
      {
        commands: [
          command(1, { action: 'key', key: 'home' }),
          command(2, { action: 'tap', x: 500, y: 1 }),
          command(3, { action: 'jump' }),
          command(4, 'not json'),
          command(5, { action: 'screenshot' }),
          command(6, { action: 'text', text: 'secret words' }),
        ],
        ended: false,
      },
      { commands: [], ended: true },
    ]);
    const device = countingDevice();
    const settings = options(client, 60_000);
    const end = await serveInteractive(settings, device);
    expect(end).toMatchObject({ reason: 'released', inputs: 6 });
    expect(answers.map((answer) => answer.status)).toEqual([200, 400, 400, 400, 200, 200]);
    expect(JSON.parse(answers[1]!.body).value.message).toBe('off the screen');
    expect(JSON.parse(answers[4]!.body).value).toBe('cG5n');
    expect(device.done.map((input) => input.action)).toEqual(['key', 'screenshot', 'text']);
    // One frame a change: never the same picture twice in a row.
    expect(frames.length).toBeGreaterThanOrEqual(1);
    expect(frames.every((frame, index) => index === 0 || !frame.equals(frames[index - 1]!))).toBe(true);
    // The log keeps what was done, not the text typed.
    const log = fs.readFileSync(end.log, 'utf8');
    expect(log).toContain('key {"action":"key","key":"home"} -> 200');
    expect(log).not.toContain('secret words');
    expect(log).toContain('(12 characters)');
    expect(interactiveResult(end, 'session').testCases).toMatchObject([{ result: 'PASSED' }]);
  });

  it('ends a session without input at its idle timeout, and one whose signal fired as stopped', async () => {
    const idle = fakeServer([{ commands: [command(1, { action: 'key', key: 'back' })], ended: false }]);
    const started = Date.now();
    const end = await serveInteractive(options(idle.client, 300), countingDevice());
    expect(end.reason).toBe('idle');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(fs.readFileSync(end.log, 'utf8')).toContain('session ended: idle');

    const stop = new AbortController();
    const stopped = serveInteractive(options(fakeServer([]).client, 60_000, stop.signal), countingDevice());
    stop.abort();
    const result = interactiveResult(await stopped, 'session');
    expect(result.outcome).toBe('STOPPED');
  });
});
