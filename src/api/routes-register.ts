/**
 * Turns the route table into Fastify routes. Each declared path answers under `/api` and
 * `/api/v2`, and `/me/...` paths also as `/users/:userId/...` (docs/api.md#paths). Path ids are parsed
 * here (a malformed id is a 404 like an unknown one), query and body parameters are merged and
 * normalised. Another method on a known path answers 405 with `Allow` (known-paths.ts).
 */
import type { FastifyInstance, FastifyRequest, preHandlerHookHandler, preValidationHookHandler } from 'fastify';
import type {} from '@fastify/swagger';
import Type, { type TObject, type TSchema } from 'typebox';
import { evaluateList } from '../domain/list-eval.ts';
import { type ListQuery, parseListQuery } from '../domain/list-query.ts';
import {
  InvalidParameterError,
  MethodNotAllowedError,
  NotFoundError,
  RangeNotSatisfiableError,
} from '../domain/errors.ts';
import type { User } from '../domain/users.ts';
import type { Context } from '../services/context.ts';
import { type Stringify, jsonSerializer } from './encode/json.ts';
import { encodeFor } from './plugins/negotiate.ts';
import type { PresentContext } from './present/context.ts';
import { ApiError } from './present/error.ts';
import { rangeAsked } from '../domain/byte-range.ts';
import { presentList } from './present/list.ts';
import { type KnownPaths, urlsOf } from './known-paths.ts';
import type { Answers, LinkParams, RouteSpec } from './route.ts';
import { ListInput } from './schemas.ts';

export interface RegisterOptions {
  readonly ctx: Context;
  /** Configured public base URL; when absent, links are built from the request's Host. */
  readonly publicUrl: string | undefined;
}

const ID = /^[1-9]\d{0,15}$/;

/** Resource names for the 404 of a malformed or unknown path id. */
const RESOURCE_OF_PARAM: Readonly<Record<string, string>> = {
  userId: 'User',
  projectId: 'Project',
  runId: 'Test run',
  deviceRunId: 'Device run',
  deviceSessionId: 'Device session',
  deviceId: 'Device',
  groupId: 'Device group',
  parameterId: 'Config parameter',
  fileId: 'File',
  accountId: 'User',
  accessGroupId: 'Access group',
  memberId: 'User',
  sharedResourceId: 'Shared resource',
  notificationId: 'Notification',
  propertyId: 'Property',
};

export function registerRoutes(
  app: FastifyInstance,
  specs: readonly RouteSpec[],
  known: KnownPaths,
  options: RegisterOptions,
): void {
  // One schema object for all routes whose input is the same: Ajv compiles an object once however
  // many routes use it, and compiling was a third of a server's start (998 routes, 55 inputs).
  const inputs = new Map<string, TSchema>();
  for (const spec of specs) {
    const own = inputOf(spec);
    const key = own === undefined ? '' : JSON.stringify(own);
    if (own !== undefined && !inputs.has(key)) inputs.set(key, own);
    const input = own === undefined ? undefined : inputs.get(key);
    urlsOf(spec).forEach((url, index) => registerOne(app, spec, input, url, index === 0, options));
  }
  for (const { url, method, allowed } of known.shadowed) {
    app.route({
      method,
      url,
      schema: { hide: true },
      config: { access: 'anonymous' },
      handler: async (request, reply) => {
        reply.header('Allow', allowed.join(', '));
        throw new MethodNotAllowedError(method, request.url.split('?')[0]!, allowed);
      },
    });
  }
}

function registerOne(
  app: FastifyInstance,
  spec: RouteSpec,
  input: TSchema | undefined,
  url: string,
  documented: boolean,
  options: RegisterOptions,
): void {
  const paramNames = [...url.matchAll(/:(\w+)/g)].map((match) => match[1]!);
  const carriesBody = spec.method !== 'GET';
  const arrayFields = arrayFieldsOf(input);
  app.route({
    method: spec.method,
    url,
    schema: {
      summary: spec.summary,
      tags: [...spec.tags],
      hide: !documented,
      ...(input !== undefined && (carriesBody && !spec.upload ? { body: input } : { querystring: input })),
      ...(spec.upload && { consumes: ['multipart/form-data'] }),
      ...(spec.access !== 'anonymous' && { security: [{ apiKey: [] }] }),
      produces: PRODUCES,
      response: responseSchemas(spec.answers),
    },
    serializerCompiler: jsonSerializer,
    config: { access: spec.access, takesPassword: spec.takesPassword === true },
    preValidation: prepareInput(paramNames, carriesBody && !spec.upload, arrayFields),
    preHandler: checkNumbers(carriesBody && !spec.upload),
    handler: async (request, reply) => {
      const input = carriesBody && !spec.upload ? request.body : request.query;
      // One place parses the list grammar for every list route (docs/api.md#lists).
      const list = spec.list === undefined ? WHOLE_LIST : parseListQuery(input as object, spec.list.spec);
      const links = (extra?: LinkParams) => {
        const path = request.url.split('?')[0]!;
        return { selfURI: path.replace(/^\/api(\/v2)?/, ''), url: present.baseUrl + path, extra };
      };
      const present: PresentContext = {
        user: request.user,
        baseUrl: baseUrl(request, options.publicUrl),
        now: options.ctx.clock(),
      };
      const outcome = await spec.handle({
        params: request.params as Record<string, number>,
        input,
        user: request.user,
        credential: request.credential,
        ctx: options.ctx,
        present,
        request,
        list,
      });
      switch (outcome.kind) {
        case 'list': {
          if (spec.list === undefined) throw new Error(`${spec.method} ${spec.path} answers a list but declares none`);
          const { items, total } =
            outcome.total === null
              ? evaluateList(outcome.items, list, spec.list.search)
              : { items: outcome.items, total: outcome.total };
          const body = presentList(items, total, list, links(outcome.extra));
          const { contentType, payload } = encodeFor(
            request.headers.accept,
            body,
            reply.getSerializationFunction(String(outcome.status)) as Stringify | undefined,
          );
          return reply.code(outcome.status).type(contentType).send(payload);
        }
        case 'empty':
          return reply.code(outcome.status).send();
        case 'text':
          return reply.code(outcome.status).type(outcome.contentType).send(outcome.text);
        case 'bytes': {
          const answer = outcome.bytes;
          const disposition = answer.inline ? 'inline' : 'attachment';
          reply
            .type(answer.contentType)
            .header(
              'content-disposition',
              `${disposition}; filename="${answer.fileName.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(answer.fileName)}`,
            );
          if (answer.length === null) return reply.code(outcome.status).send(answer.open());
          if (!answer.ranged)
            return reply.code(outcome.status).header('content-length', answer.length).send(answer.open());
          reply.header('accept-ranges', 'bytes');
          // If-Range would need a validator we do not send; a client that uses it gets the whole file.
          const asked =
            request.headers['if-range'] === undefined
              ? rangeAsked(request.headers.range, answer.length)
              : { kind: 'whole' as const };
          if (asked.kind === 'unsatisfiable') {
            // The answer's own type no longer applies: the error is rendered in the negotiated format.
            reply.removeHeader('content-disposition');
            reply.header('content-range', `bytes */${answer.length}`);
            throw new RangeNotSatisfiableError(answer.length);
          }
          if (asked.kind === 'whole')
            return reply.code(outcome.status).header('content-length', answer.length).send(answer.open());
          const { start, end } = asked.range;
          return reply
            .code(206)
            .header('content-range', `bytes ${start}-${end}/${answer.length}`)
            .header('content-length', end - start + 1)
            .send(answer.open(asked.range));
        }
        case 'rep': {
          const { contentType, payload } = encodeFor(
            request.headers.accept,
            outcome.body,
            reply.getSerializationFunction(String(outcome.status)) as Stringify | undefined,
          );
          // The same URL answers JSON or XML (each with its own ETag): caches must key on Accept.
          return reply.code(outcome.status).type(contentType).header('vary', 'Accept').send(payload);
        }
      }
    },
  });
}

const WHOLE_LIST: ListQuery = {
  offset: 0,
  limit: 0,
  search: '',
  sort: [],
  filters: [],
  raw: { sort: '', filter: [] },
};

/**
 * The route's input schema; a list route's takes the list parameters besides its own. The same
 * object at every call, so that apps sharing a validator compiler (the tests') compile it once.
 */
function inputOf(spec: RouteSpec): TSchema | undefined {
  if (spec.list === undefined) return spec.input;
  let input = listInputs.get(spec);
  if (input === undefined) {
    const own = (spec.input as TObject | undefined)?.properties ?? {};
    listInputs.set(spec, (input = Type.Object({ ...ListInput.properties, ...own })));
  }
  return input;
}

const listInputs = new WeakMap<RouteSpec, TSchema>();

/** Answers are XML unless the request prefers JSON (plugins/negotiate.ts); both have the schema's fields. */
const PRODUCES = ['application/xml', 'application/json'];

/** The route's answers for Fastify (the JSON serializer) and the OpenAPI document. */
function responseSchemas(answers: Answers): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(answers)) {
    if (answer === 'empty') schemas[status] = { description: 'No content', type: 'null' };
    else if (answer !== undefined && 'bytes' in answer) {
      schemas[status] = {
        description: answer.description,
        content: { [answer.bytes]: { schema: { type: 'string', format: 'binary' } } },
      };
    } else schemas[status] = answer;
  }
  return { ...schemas, '4xx': ApiError, '5xx': ApiError };
}

/**
 * Runs before schema validation: parses path ids, checks that `users/:userId` is the caller, and
 * normalises parameters (`x[]` → `x`, comma-joined id lists split, query merged into the body).
 */
function prepareInput(
  paramNames: readonly string[],
  carriesBody: boolean,
  arrayFields: ReadonlySet<string>,
): preValidationHookHandler {
  return async (request) => {
    const raw = request.params as Record<string, string>;
    const params: Record<string, number> = {};
    for (const name of paramNames) {
      const text = raw[name] ?? '';
      if (!ID.test(text) || !Number.isSafeInteger(Number(text)))
        throw new NotFoundError(RESOURCE_OF_PARAM[name] ?? name, text.slice(0, 40));
      params[name] = Number(text);
    }
    if (params.userId !== undefined && params.userId !== (request.user as User | null)?.id) {
      throw new NotFoundError('User', params.userId);
    }
    request.params = params;
    const query = normalize(request.query as Record<string, unknown>, arrayFields);
    if (!carriesBody) {
      request.query = query;
      return;
    }
    const body = request.body;
    if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) {
      throw Object.assign(new Error('The request body must be an object of parameters'), { statusCode: 400 });
    }
    request.body = { ...query, ...normalize((body ?? {}) as Record<string, unknown>, arrayFields) };
  };
}

/**
 * Runs after schema validation. Ajv's coercion turns the text '1e400' or 'Infinity' into Infinity
 * and then skips its integer and maximum checks; and no number of this API (ids, counts, seconds)
 * goes beyond 2^53, past which the store's 64-bit columns refuse it and the statement fails.
 */
function checkNumbers(carriesBody: boolean): preHandlerHookHandler {
  return async (request) => {
    const input = (carriesBody ? request.body : request.query) as Record<string, unknown> | undefined;
    for (const [name, value] of Object.entries(input ?? {})) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item === 'number' && !(Math.abs(item) <= Number.MAX_SAFE_INTEGER)) {
          throw new InvalidParameterError(
            name,
            `Parameter '${name}' must be a number between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`,
          );
        }
      }
    }
  };
}

function normalize(input: Record<string, unknown>, arrayFields: ReadonlySet<string>): Record<string, unknown> {
  const output: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    const name = key.endsWith('[]') ? key.slice(0, -2) : key;
    let normalized = value;
    if (arrayFields.has(name)) {
      const items = Array.isArray(value) ? value : [value];
      normalized = items.flatMap((item) =>
        typeof item === 'string'
          ? item
              .split(',')
              .map((part) => part.trim())
              .filter((part) => part !== '')
          : [item],
      );
    }
    const existing = output[name];
    output[name] = existing === undefined ? normalized : ([] as unknown[]).concat(existing, normalized);
  }
  return output;
}

/** Fields declared as arrays of integers: those accept `x=1,2` besides `x[]=1&x[]=2` and `x=1&x=2`. */
function arrayFieldsOf(schema: TSchema | undefined): ReadonlySet<string> {
  const properties =
    (schema as { properties?: Record<string, { type?: string; items?: { type?: string } }> } | undefined)?.properties ??
    {};
  return new Set(
    Object.entries(properties)
      .filter(([, property]) => property.type === 'array' && property.items?.type === 'integer')
      .map(([name]) => name),
  );
}

function baseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}
