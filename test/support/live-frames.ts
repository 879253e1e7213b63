/**
 * Reads an interactive session's live screen (docs/api.md#interactive-sessions) as a browser
 * would: the multipart stream's frames, one by one.
 */
import { expect } from 'vitest';

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
