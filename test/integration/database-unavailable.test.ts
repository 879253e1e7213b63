/**
 * A database that does not answer (PostgreSQL restarting, a failover) is a moment to wait, not a
 * bug: requests get 503 with Retry-After, in the negotiated shape, and the agent retries them.
 * Here the store points at a port where nothing listens, so every statement is refused.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.ts';
import { memoryNotifier } from '../../src/store/notifier.ts';
import { DEFAULT_LIMITS } from '../../src/services/context.ts';
import { directoryBlobStore } from '../../src/store/blobs.ts';
import { type Database, openDatabase } from '../../src/store/db.ts';
import { createStore } from '../../src/store/store.ts';
import { parseXml, testKeyRing } from '../support/harness.ts';

describe('a database that does not answer', () => {
  let app: FastifyInstance;
  let database: Database;
  const blobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-unavailable-'));

  beforeAll(async () => {
    // Port 9 (discard) has no PostgreSQL: connections are refused at once.
    database = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:9/none' });
    const ctx = {
      store: createStore(database),
      clock: Date.now,
      blobs: directoryBlobStore(blobDir),
      notifier: memoryNotifier(),
      limits: DEFAULT_LIMITS,
      flavour: 'private' as const,
      keyRing: testKeyRing(),
    };
    app = await buildApp({ ctx, version: 'test' });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await database.close();
    fs.rmSync(blobDir, { recursive: true, force: true });
  });

  const key = `Basic ${Buffer.from('A'.repeat(32) + ':').toString('base64')}`;

  it('answers 503 with Retry-After in JSON and XML, never 500', async () => {
    const json = await app.inject({
      method: 'GET',
      url: '/api/me/projects',
      headers: { authorization: key, accept: 'application/json' },
    });
    expect(json.statusCode).toBe(503);
    expect(json.headers['retry-after']).toBe('2');
    expect(JSON.parse(json.body)).toEqual({ message: expect.stringContaining('retry'), statusCode: 503 });
    const xml = await app.inject({ method: 'GET', url: '/api/me', headers: { authorization: key } });
    expect(xml.statusCode).toBe(503);
    expect(parseXml(xml.body).apiExceptionMessage.statusCode).toBe('503');
  });

  it('answers the agent protocol and OAuth with 503 too, which agents and clients retry', async () => {
    const agent = await app.inject({
      method: 'POST',
      url: '/agent/v1/heartbeat',
      headers: { authorization: 'Bearer dca_token', 'content-type': 'application/json' },
      payload: '{"running":[],"unhealthy":[]}',
    });
    expect(agent.statusCode).toBe(503);
    const token = await app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'client_id=testdroid-cloud-api&grant_type=password&username=a%40b.c&password=x',
    });
    expect(token.statusCode).toBe(503);
  });
});
