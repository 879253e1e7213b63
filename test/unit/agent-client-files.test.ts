/**
 * The agent client's file transfers (node:http, as its JSON requests): an artifact streamed from
 * its file with its length and token, uploads on kept-alive connections, a download
 * written to its target, a refusal raised with the server's message, a cut download failed.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError, protocolClient } from '../../src/agent/client.ts';

describe('the agent protocol client, moving files', () => {
  let server: http.Server;
  let url: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-agent-client-'));
  const received: Array<{
    url: string;
    length: string | undefined;
    auth: string | undefined;
    body: string;
    connection: string | undefined;
  }> = [];
  beforeAll(async () => {
    server = http.createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      if (request.url === '/agent/v1/inputs/cut') {
        response.writeHead(200, { 'content-length': '1000' });
        response.write('only the start');
        setImmediate(() => response.socket?.destroy());
        return;
      }
      if (request.url === '/agent/v1/inputs/gone') {
        response
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'no such file' }));
        return;
      }
      received.push({
        url: request.url!,
        length: request.headers['content-length'],
        auth: request.headers.authorization,
        body: Buffer.concat(chunks).toString(),
        connection: request.headers.connection,
      });
      if (request.method === 'GET') response.end('the input');
      else response.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('uploads artifacts from their files over kept-alive connections, and downloads inputs', async () => {
    const client = protocolClient({ serverUrls: [url], token: 'secret' });
    const file = path.join(dir, 'junit.xml');
    fs.writeFileSync(file, '<testsuite/>'.repeat(10_000));
    await client.artifact(7, file, 'junit.xml', 'junit', { maxElapsedMs: 0 });
    await client.artifact(7, file, 'again.xml', 'junit', { maxElapsedMs: 0 });
    const target = path.join(dir, 'input.apk');
    await client.download('/agent/v1/device-runs/7/files/3', target, { maxElapsedMs: 0 });
    expect(fs.readFileSync(target, 'utf8')).toBe('the input');
    expect(received.map(({ url, length, auth }) => [url, length, auth])).toEqual([
      ['/agent/v1/device-runs/7/artifacts?name=junit.xml&kind=junit', '120000', 'Bearer secret'],
      ['/agent/v1/device-runs/7/artifacts?name=again.xml&kind=junit', '120000', 'Bearer secret'],
      ['/agent/v1/device-runs/7/files/3', undefined, 'Bearer secret'],
    ]);
    expect(received[0]!.body).toBe(fs.readFileSync(file, 'utf8'));
    // Kept alive, not one connection for certain: Node frees a socket for the next request only once
    // the upload's own write has finished too, which on a busy machine may come after its answer.
    expect(received.map((request) => request.connection)).toEqual(['keep-alive', 'keep-alive', 'keep-alive']);
  });

  it("raises a refusal with the server's message, and fails a download cut short", async () => {
    const client = protocolClient({ serverUrls: [url], token: 'secret' });
    const target = path.join(dir, 'other.apk');
    const refused = client.download('/agent/v1/inputs/gone', target, { maxElapsedMs: 0 });
    await expect(refused).rejects.toBeInstanceOf(ProtocolError);
    await expect(refused).rejects.toThrow('GET /agent/v1/inputs/gone: 404 no such file');
    await expect(client.download('/agent/v1/inputs/cut', target, { maxElapsedMs: 0 })).rejects.toThrow();
  });
});
