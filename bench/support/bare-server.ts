/**
 * Child process of the API read benchmark: the baseline. A bare Fastify server answering each
 * path with the bytes our server gave for it (JSON or XML by the Accept header): no auth, no
 * store, no serialization. Announces (READY) {url} when it listens.
 */
import fs from 'node:fs';
import { READY } from './processes.ts';
import Fastify from 'fastify';

interface Recorded {
  readonly path: string;
  readonly json: { readonly type: string; readonly body: string };
  readonly xml: { readonly type: string; readonly body: string };
}

const file = process.argv[2];
if (file === undefined) throw new Error('usage: bare-server.ts RESPONSES.json');
const recorded = JSON.parse(fs.readFileSync(file, 'utf8')) as Recorded[];
const app = Fastify();
for (const { path, json, xml } of recorded) {
  const jsonBody = Buffer.from(json.body);
  const xmlBody = Buffer.from(xml.body);
  app.get(path, (request, reply) => {
    const asJson = (request.headers.accept ?? '').includes('json');
    reply.type(asJson ? json.type : xml.type).send(asJson ? jsonBody : xmlBody);
  });
}
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${READY}${JSON.stringify({ url })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
