/** Uploads as clients send them: multipart, optionally trickled so that a fault finds them in flight. */
import { randomBytes } from 'node:crypto';
import type { Call } from './traffic.ts';

/** A multipart upload of `bytes`, trickled in `chunk`s every `everyMs` when asked (to be in flight when a kill comes). */
export function uploadFile(
  call: Call,
  key: string,
  name: string,
  bytes: Buffer,
  trickle?: { chunk: number; everyMs: number },
) {
  const boundary = `chaos${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = trickle?.chunk ?? bytes.length;
  const body = new ReadableStream({
    async start(controller) {
      controller.enqueue(head);
      for (let offset = 0; offset < bytes.length; offset += chunk) {
        if (trickle !== undefined) await sleep(trickle.everyMs);
        controller.enqueue(bytes.subarray(offset, offset + chunk));
      }
      controller.enqueue(tail);
      controller.close();
    },
  });
  return call('POST', '/api/me/files', {
    key,
    body,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    label: 'upload',
    signal: AbortSignal.timeout(120_000),
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
