/**
 * The agent protocol over HTTP (src/protocol/v1.ts): JSON in, JSON out, agent tokens only. Not
 * part of the public API; the same error rendering applies.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ArtifactQuery, CleanedReport, ClaimRequest, DevicesRequest, HeartbeatRequest, HelloRequest, PROTOCOL_PREFIX, ProgressReport, REPORT_BODY_LIMIT_BYTES, ResultReport } from '../../protocol/v1.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { openAssignedFile, reportCleaned, reportProgress, reportResult, storeArtifact } from '../../services/agent-reports.ts';
import { addDevices, claim, heartbeat, hello } from '../../services/agent-session.ts';
import type { Context } from '../../services/context.ts';
import type { Agent } from '../../domain/agents.ts';

const ID = /^[1-9]\d{0,15}$/;
const config = { access: 'agent' as const };

/**
 * What agents report is text from tests and devices, stored as it came, except NUL: PostgreSQL
 * text cannot hold it (the insert would fail, and the agent retry it for ever), so it becomes
 * U+FFFD on both engines. What else XML cannot carry is kept and replaced only when shown.
 * Run as a preHandler: on a body the schema has accepted, so of bounded depth.
 */
function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('\u0000') ? value.replaceAll('\u0000', '\ufffd') : value;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) value[index] = withoutNul(value[index]);
  } else if (typeof value === 'object' && value !== null) {
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) object[key] = withoutNul(object[key]);
  }
  return value;
}
const storable = async (request: FastifyRequest) => {
  request.body = withoutNul(request.body);
};
const schema = { hide: true };

function idParam(request: FastifyRequest, name: string, resource: string): number {
  const text = (request.params as Record<string, string>)[name] ?? '';
  if (!ID.test(text)) throw new NotFoundError(resource, text.slice(0, 40));
  return Number(text);
}

export function registerAgentProtocol(app: FastifyInstance, ctx: Context): void {
  const agentOf = (request: FastifyRequest): Agent => request.agent!;
  const json = <T>(value: T) => value;

  app.post(`${PROTOCOL_PREFIX}/hello`, { config, preHandler: storable, schema: { ...schema, body: HelloRequest } }, async (request) => json(await hello(ctx, agentOf(request), request.body as HelloRequest)));
  app.post(`${PROTOCOL_PREFIX}/devices`, { config, preHandler: storable, schema: { ...schema, body: DevicesRequest } }, async (request) => json(await addDevices(ctx, agentOf(request), request.body as DevicesRequest)));

  app.post(`${PROTOCOL_PREFIX}/heartbeat`, { config, preHandler: storable, schema: { ...schema, body: HeartbeatRequest } }, async (request) =>
    json(await heartbeat(ctx, agentOf(request), request.body as HeartbeatRequest)),
  );

  // Long polls end early when their agent hangs up, and all at once when the server closes.
  const polls = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const poll of polls) poll.abort();
  });
  app.post(`${PROTOCOL_PREFIX}/claims`, { config, schema: { ...schema, body: ClaimRequest } }, async (request, reply) => {
    const poll = new AbortController();
    polls.add(poll);
    // The response closes before it is sent only when the agent hung up.
    reply.raw.once('close', () => poll.abort());
    try {
      return json(await claim(ctx, agentOf(request), request.body as ClaimRequest, poll.signal));
    } finally {
      polls.delete(poll);
    }
  });

  const bodyLimit = REPORT_BODY_LIMIT_BYTES;
  app.post(`${PROTOCOL_PREFIX}/device-runs/:deviceRunId/progress`, { config, preHandler: storable, bodyLimit, schema: { ...schema, body: ProgressReport } }, async (request) =>
    json(await reportProgress(ctx, agentOf(request), idParam(request, 'deviceRunId', 'Device run'), request.body as ProgressReport)),
  );

  app.post(`${PROTOCOL_PREFIX}/device-runs/:deviceRunId/result`, { config, preHandler: storable, bodyLimit, schema: { ...schema, body: ResultReport } }, async (request) =>
    json(await reportResult(ctx, agentOf(request), idParam(request, 'deviceRunId', 'Device run'), request.body as ResultReport)),
  );

  // Artifacts stream in as raw bytes: the body is not parsed, only piped to the blob store.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    scope.put(`${PROTOCOL_PREFIX}/device-runs/:deviceRunId/artifacts`, { config, schema: { ...schema, querystring: ArtifactQuery } }, async (request, reply) => {
      const stored = await storeArtifact(ctx, agentOf(request), idParam(request, 'deviceRunId', 'Device run'), request.query as ArtifactQuery, request.body as NodeJS.ReadableStream as never, declaredLength(request.headers['content-length']));
      return reply.code(201).send(stored);
    });
  });

  app.get(`${PROTOCOL_PREFIX}/device-runs/:deviceRunId/files/:fileId`, { config, schema }, async (request, reply) => {
    const { file, stream } = await openAssignedFile(ctx, agentOf(request), idParam(request, 'deviceRunId', 'Device run'), idParam(request, 'fileId', 'File'));
    return reply.type('application/octet-stream').header('content-length', file.size).send(stream);
  });

  app.post(`${PROTOCOL_PREFIX}/devices/:deviceId/cleaned`, { config, preHandler: storable, schema: { ...schema, body: CleanedReport } }, async (request) =>
    json(await reportCleaned(ctx, agentOf(request), idParam(request, 'deviceId', 'Device'), request.body as CleanedReport)),
  );

  app.get(`${PROTOCOL_PREFIX}/ping`, { config, schema: { ...schema, response: { 200: Type.Object({ ok: Type.Boolean() }) } } }, async () => ({ ok: true }));
}

/** The Content-Length of a request, when it is a plain number (a chunked body has none). */
function declaredLength(header: string | undefined): number | undefined {
  return header !== undefined && /^\d{1,16}$/.test(header) ? Number(header) : undefined;
}
