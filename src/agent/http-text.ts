/**
 * One HTTP request through node:http (or https), its whole answer read as text. The agent's JSON
 * requests (its protocol's, and a WebDriver command's to the device's Appium server) go through
 * here rather than fetch: fetch took about twice as long per request (docs/benchmarks.md#webdriver-relay).
 * So do its streamed ones (an artifact's upload, an input's download), on the same kept-alive pool.
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';

/** Connections kept open between requests, as fetch keeps them (idle, they hold no process up). */
export interface KeepAlive {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

export const keepAlive = (): KeepAlive => ({
  http: new http.Agent({ keepAlive: true }),
  https: new https.Agent({ keepAlive: true }),
});

export function requestText(
  pool: KeepAlive,
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<{ status: number; text: string }> {
  const secure = url.protocol === 'https:';
  const headers =
    init.body === undefined
      ? init.headers
      : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      url,
      { method: init.method, agent: secure ? pool.https : pool.http, headers, signal: init.signal },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
        response.on('close', () => {
          if (!response.complete) reject(new Error('the connection closed before the whole answer came'));
        });
      },
    );
    request.on('error', reject);
    request.end(init.body);
  });
}

/** Sends a request, its body streamed from `body` (none: null); resolves with the response, unread. */
export function openRequest(
  pool: KeepAlive,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Readable | null,
): Promise<http.IncomingMessage> {
  const secure = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      url,
      { method, agent: secure ? pool.https : pool.http, headers },
      resolve,
    );
    request.on('error', reject);
    if (body === null) request.end();
    else {
      // A file that cannot be read fails the request (and so the attempt), not the agent.
      body.on('error', (error) => request.destroy(error));
      body.pipe(request);
    }
  });
}

/** The whole of a response's body. */
export async function readAll(response: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
