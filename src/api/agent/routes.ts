/**
 * The agent protocol over HTTP (src/protocol/v1.ts): JSON in, JSON out, agent tokens only. Not
 * part of the public API; the same error rendering applies.
 */
import type { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import {
  ArtifactQuery,
  CleanedReport,
  ClaimRequest,
  DevicesRequest,
  HeartbeatRequest,
  HelloRequest,
  LogLinesReport,
  PROTOCOL_PREFIX,
  ProgressReport,
  REPORT_BODY_LIMIT_BYTES,
  ResultReport,
  WebDriverAnswerReport,
  WebDriverPoll,
} from '../../protocol/v1.ts';
import { InvalidParameterError, NotFoundError, PayloadTooLargeError } from '../../domain/errors.ts';
import {
  openAssignedFile,
  reportCleaned,
  reportProgress,
  reportResult,
  storeArtifact,
} from '../../services/agent-reports.ts';
import { addDevices, claim, heartbeat, hello } from '../../services/agent-session.ts';
import { claimTurns } from '../../services/claim-turns.ts';
import type { Context } from '../../services/context.ts';
import { answerCommand, giveBackCommands, takeCommands } from '../../services/webdriver-agent.ts';
import type { WebDriverChannels } from '../../services/webdriver-channels.ts';
import { storeFrame, storeLogLines } from '../../services/interactive.ts';
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
/**
 * Why a long poll's signal aborts. 'close' comes after every answer too, and abort() without a
 * reason builds a DOMException with its stack each time: 0.1 ms of a WebDriver command's relay.
 */
const HUNG_UP = new DOMException('The agent hung up', 'AbortError');

/**
 * Path ids are read here rather than by a schema: one that is not an id names a resource that
 * does not exist (404), as in the public API, not a bad request.
 */
function id(text: string, resource: string): number {
  if (!ID.test(text)) throw new NotFoundError(resource, text.slice(0, 40));
  return Number(text);
}
const DeviceRunPath = Type.Object({ deviceRunId: Type.String() });
const FilePath = Type.Object({ deviceRunId: Type.String(), fileId: Type.String() });
const DevicePath = Type.Object({ deviceId: Type.String() });
const FrameQuery = Type.Object({ time: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) });
/** Larger than any screen's PNG; a body beyond it is refused rather than held. */
const FRAME_LIMIT_BYTES = 8 * 1024 * 1024;

async function readAll(body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new PayloadTooLargeError(`A frame is larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function registerAgentProtocol(untyped: FastifyInstance, ctx: Context, channels: WebDriverChannels): void {
  // Bodies, queries and paths are typed from their schemas, which Fastify has validated them against.
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const agentOf = (request: FastifyRequest): Agent => {
    // The WebDriver relay's commands in memory wait for an agent that still comes here.
    channels.agentSeen(request.agent!.id);
    return request.agent!;
  };
  const json = <T>(value: T) => value;

  app.post(
    `${PROTOCOL_PREFIX}/hello`,
    { config, preHandler: storable, schema: { ...schema, body: HelloRequest } },
    async (request) => json(await hello(ctx, agentOf(request), request.body)),
  );
  app.post(
    `${PROTOCOL_PREFIX}/devices`,
    { config, preHandler: storable, schema: { ...schema, body: DevicesRequest } },
    async (request) => json(await addDevices(ctx, agentOf(request), request.body)),
  );

  app.post(
    `${PROTOCOL_PREFIX}/heartbeat`,
    { config, preHandler: storable, schema: { ...schema, body: HeartbeatRequest } },
    async (request) => json(await heartbeat(ctx, agentOf(request), request.body)),
  );

  // Long polls end early when their agent hangs up (or their answer is sent), and all at once when
  // the server closes.
  const polls = new Set<AbortController>();
  const turns = claimTurns();
  app.addHook('preClose', async () => {
    for (const poll of polls) poll.abort();
  });
  app.post(
    `${PROTOCOL_PREFIX}/claims`,
    { config, schema: { ...schema, body: ClaimRequest } },
    async (request, reply) => {
      const poll = new AbortController();
      polls.add(poll);
      // The response closes before it is sent only when the agent hung up.
      reply.raw.once('close', () => poll.abort(HUNG_UP));
      try {
        return json(await claim(ctx, agentOf(request), request.body, poll.signal, turns));
      } finally {
        polls.delete(poll);
      }
    },
  );

  // Appium client side (docs/api.md#appium-client-side): a long poll like the claims.
  app.post(
    `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/webdriver/commands`,
    { config, schema: { ...schema, params: DeviceRunPath, body: WebDriverPoll } },
    async (request, reply) => {
      const poll = new AbortController();
      polls.add(poll);
      reply.raw.once('close', () => poll.abort(HUNG_UP));
      try {
        const deviceRunId = id(request.params.deviceRunId, 'Device run');
        const polled = await takeCommands(
          ctx,
          channels,
          agentOf(request),
          deviceRunId,
          request.body.waitMs,
          poll.signal,
        );
        // The agent hung up while the poll took them: its next poll takes them again.
        if (poll.signal.aborted) await giveBackCommands(ctx, channels, deviceRunId, polled.commands);
        return json(polled);
      } finally {
        polls.delete(poll);
      }
    },
  );

  const bodyLimit = REPORT_BODY_LIMIT_BYTES;
  app.post(
    `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/webdriver/answers`,
    { config, bodyLimit, schema: { ...schema, params: DeviceRunPath, body: WebDriverAnswerReport } },
    async (request, reply) => {
      // With waitMs it is the next poll as well: a long poll like the commands'.
      const poll = new AbortController();
      polls.add(poll);
      reply.raw.once('close', () => poll.abort(HUNG_UP));
      try {
        const deviceRunId = id(request.params.deviceRunId, 'Device run');
        const answered = await answerCommand(ctx, channels, agentOf(request), deviceRunId, request.body, poll.signal);
        if (poll.signal.aborted) await giveBackCommands(ctx, channels, deviceRunId, answered.commands ?? []);
        return json(answered);
      } finally {
        polls.delete(poll);
      }
    },
  );
  // Interactive sessions (docs/api.md#interactive-sessions): the device's log, as the agent reads it.
  app.post(
    `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/log-lines`,
    { config, preHandler: storable, schema: { ...schema, params: DeviceRunPath, body: LogLinesReport } },
    async (request) =>
      json(
        await storeLogLines(ctx, agentOf(request), id(request.params.deviceRunId, 'Device run'), request.body.lines),
      ),
  );
  app.post(
    `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/progress`,
    { config, preHandler: storable, bodyLimit, schema: { ...schema, params: DeviceRunPath, body: ProgressReport } },
    async (request) =>
      json(await reportProgress(ctx, agentOf(request), id(request.params.deviceRunId, 'Device run'), request.body)),
  );

  app.post(
    `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/result`,
    { config, preHandler: storable, bodyLimit, schema: { ...schema, params: DeviceRunPath, body: ResultReport } },
    async (request) =>
      json(await reportResult(ctx, agentOf(request), id(request.params.deviceRunId, 'Device run'), request.body)),
  );

  // Artifacts stream in as raw bytes: the body is not parsed, only piped to the blob store.
  app.register(async (untypedScope) => {
    const scope = untypedScope.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    // The body is then the request stream itself (a Readable), which no schema describes.
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    scope.put(
      `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/artifacts`,
      { config, schema: { ...schema, params: DeviceRunPath, querystring: ArtifactQuery } },
      async (request, reply) => {
        const stored = await storeArtifact(
          ctx,
          agentOf(request),
          id(request.params.deviceRunId, 'Device run'),
          request.query,
          request.body as Readable,
          declaredLength(request.headers['content-length']),
        );
        return reply.code(201).send(stored);
      },
    );
    // Interactive sessions (docs/api.md#interactive-sessions): the device's screen, pushed as it changes.
    scope.put(
      `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/frames`,
      { config, schema: { ...schema, params: DeviceRunPath, querystring: FrameQuery } },
      async (request) => {
        const mediaType = String(request.headers['content-type'] ?? '')
          .split(';')[0]!
          .trim();
        if (mediaType !== 'image/png' && mediaType !== 'image/jpeg')
          throw new InvalidParameterError('content-type', 'A frame is an image/png or image/jpeg body');
        const bytes = await readAll(request.body as Readable, FRAME_LIMIT_BYTES);
        return json(
          await storeFrame(ctx, agentOf(request), id(request.params.deviceRunId, 'Device run'), {
            mediaType,
            bytes,
            time: request.query.time,
          }),
        );
      },
    );
  });

  app.get(
    `${PROTOCOL_PREFIX}/device-runs/:deviceRunId/files/:fileId`,
    { config, schema: { ...schema, params: FilePath } },
    async (request, reply) => {
      const { file, open } = await openAssignedFile(
        ctx,
        agentOf(request),
        id(request.params.deviceRunId, 'Device run'),
        id(request.params.fileId, 'File'),
      );
      return reply.type('application/octet-stream').header('content-length', file.size).send(open());
    },
  );

  app.post(
    `${PROTOCOL_PREFIX}/devices/:deviceId/cleaned`,
    { config, preHandler: storable, schema: { ...schema, params: DevicePath, body: CleanedReport } },
    async (request) =>
      json(await reportCleaned(ctx, agentOf(request), id(request.params.deviceId, 'Device'), request.body)),
  );

  app.get(
    `${PROTOCOL_PREFIX}/ping`,
    { config, schema: { ...schema, response: { 200: Type.Object({ ok: Type.Boolean() }) } } },
    async () => ({ ok: true }),
  );
}

/** The Content-Length of a request, when it is a plain number (a chunked body has none). */
function declaredLength(header: string | undefined): number | undefined {
  return header !== undefined && /^\d{1,16}$/.test(header) ? Number(header) : undefined;
}
