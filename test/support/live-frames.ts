/**
 * Reads an interactive session's live screen (docs/api.md#interactive-sessions) as a browser
 * would: the multipart stream's frames, one by one; and what the interactive session tests of
 * every driver do alike: reserve a device until it is the user's, lose the agent mid-session.
 */
import { expect } from 'vitest';
import { startReaper } from '../../src/jobs/reaper.ts';
import { until } from './cloud.ts';
import type { Harness, TestUser } from './harness.ts';

/** Reserves the device for `user` and waits until the session is RUNNING; answers its id. */
export async function reserveDevice(
  user: TestUser,
  deviceId: number,
  form: Record<string, string> = {},
): Promise<number> {
  const created = await user.call('POST', '/api/me/device-sessions', {
    json: true,
    form: { deviceId: String(deviceId), ...form },
  });
  expect(created.status, created.text).toBe(201);
  expect(created.body.type).toBe('MANUAL');
  const id = created.body.id as number;
  await until(
    async () => (await user.call('GET', `/api/me/device-sessions/${id}`, { json: true })).body.state,
    (state) => state === 'RUNNING',
    30_000,
  );
  return id;
}

/**
 * Watches the session's live screen and, once its first frame is in, has its agent stop renewing
 * the lease (as one that lost its network) and the reaper give up on it; waits until the session
 * ended WARNING and answers the frames seen.
 */
export async function loseAgentOfSession(h: Harness, origin: string, user: TestUser, id: number): Promise<Buffer[]> {
  const frames = await readFrames(
    `${origin}/api/me/device-sessions/${id}/live`,
    user.key,
    () => false,
    async (seen) => {
      if (seen.length !== 1) return;
      h.advance(h.ctx.limits.leaseMs + 1);
      const reaper = startReaper({ ctx: h.ctx, log: () => undefined, intervalMs: 60_000, agentTtlMs: 3_600_000 });
      await reaper.tick();
      await reaper.stop();
    },
  );
  expect(frames.length).toBeGreaterThanOrEqual(1);
  const session = await until(
    async () => (await user.call('GET', `/api/me/device-sessions/${id}`, { json: true })).body,
    (body) => body.state === 'WARNING',
    20_000,
  );
  expect(session.endTime).not.toBeNull();
  return frames;
}

/** `POST …/screenshot` as a browser sends it: the PNG itself. */
export async function sessionScreenshot(origin: string, user: TestUser, id: number): Promise<Buffer> {
  const response = await fetch(`${origin}/api/me/device-sessions/${id}/screenshot`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${user.key}:`).toString('base64')}` },
  });
  expect(response.headers.get('content-type')).toBe('image/png');
  return Buffer.from(await response.arrayBuffer());
}

/** Reads frames of a multipart live stream until `enough` says stop (or the stream ends). */
export async function readFrames(
  url: string,
  key: string,
  enough: (frames: Buffer[]) => boolean,
  onFrame?: (frames: Buffer[]) => Promise<void>,
): Promise<Buffer[]> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^multipart\/x-mixed-replace; boundary=/);
  const frames: Buffer[] = [];
  let buffer = Buffer.alloc(0);
  const reader = response.body!.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return frames;
      buffer = Buffer.concat([buffer, Buffer.from(value)]);
      for (;;) {
        const head = buffer.indexOf('\r\n\r\n');
        if (head < 0) break;
        const length = Number(/Content-Length: (\d+)/.exec(buffer.subarray(0, head).toString())?.[1]);
        if (!Number.isFinite(length) || buffer.length < head + 4 + length + 2) break;
        frames.push(buffer.subarray(head + 4, head + 4 + length));
        buffer = buffer.subarray(head + 4 + length + 2);
        await onFrame?.(frames);
        if (enough(frames)) return frames;
      }
    }
  } finally {
    controller.abort();
  }
}
