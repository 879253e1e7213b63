import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolClient } from '../../src/agent/client.ts';

describe('the agent protocol client', () => {
  let server: http.Server;
  let alive: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ abort: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    alive = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('moves on to the next server when one does not answer, and stays there', async () => {
    const retries: string[] = [];
    const client = protocolClient({
      serverUrls: ['http://127.0.0.1:9', alive],
      token: 't',
      onRetry: (what) => retries.push(what),
    });
    expect(client.serverUrl()).toBe('http://127.0.0.1:9');
    const answer = await client.heartbeat({ running: [], unhealthy: [] }, { maxElapsedMs: 10_000 });
    expect(answer).toEqual({ abort: [] });
    expect(retries).toEqual(['/agent/v1/heartbeat']);
    expect(client.serverUrl()).toBe(alive);
    await client.heartbeat({ running: [], unhealthy: [] }, { maxElapsedMs: 0 });
    expect(seen).toEqual(['POST /agent/v1/heartbeat', 'POST /agent/v1/heartbeat']);
  });
});
