import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { expect, it } from 'vitest';
import { AccessLog } from '../../src/api/access-log.ts';

it('logs a request once, as it is answered, and a WebDriver command inside a session only when it fails', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = Fastify({ loggerInstance: pino(sink), logController: new AccessLog() });
  app.get('/api/me', async () => ({ ok: true }));
  app.post('/wd/hub/session', async () => ({ value: { sessionId: 's1' } }));
  app.post('/wd/hub/session/:id/element', async () => ({ value: {} }));
  app.delete('/wd/hub/session/:id', async () => ({ value: null }));
  app.get('/wd/hub/session/:id/source', async () => {
    throw new Error('the driver broke');
  });
  for (const [method, url] of [
    ['GET', '/api/me?x=1'],
    ['POST', '/wd/hub/session'],
    ['POST', '/wd/hub/session/s1/element'],
    ['GET', '/wd/hub/session/s1/source'],
    ['DELETE', '/wd/hub/session/s1'],
  ] as const)
    await app.inject({ method, url });
  await app.close();
  const completed = lines.filter((line) => line.msg === 'request completed' || line.msg === 'request errored');
  expect(
    completed.map((line) => [(line.req as { url: string }).url, (line.res as { statusCode: number }).statusCode]),
  ).toEqual([
    ['/api/me?x=1', 200],
    ['/wd/hub/session', 200],
    ['/wd/hub/session/s1/source', 500],
    ['/wd/hub/session/s1', 200],
  ]);
  expect(lines.some((line) => line.msg === 'incoming request')).toBe(false);
});
