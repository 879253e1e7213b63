/**
 * Generated hostile input for every operation of the API: the operations (from the OpenAPI document,
 * and the routes outside it that take network input), malformed values, the requests built from
 * them, and the judgement of an answer. Used by test/integration/hostile-input.test.ts through
 * inject(), and by the chaos suite over real sockets.
 */
import http from 'node:http';
import { routeTable } from '../../src/api/app.ts';
import type { Access, RouteSpec } from '../../src/api/route.ts';
import { adminRoutes } from '../../src/api/routes/admin.ts';
import {
  ArtifactQuery,
  CleanedReport,
  ClaimRequest,
  HeartbeatRequest,
  HelloRequest,
  PROTOCOL_PREFIX,
  ProgressReport,
  ResultReport,
} from '../../src/protocol/v1.ts';
import { parseXml } from './harness.ts';
import type { Prng } from './prng.ts';
import { type Ids, fillPath } from './world.ts';

const MB = 1024 * 1024;
/**
 * The longest query a client can send: Node refuses a request whose head is over
 * `http.maxHeaderSize` (431) before the app sees it, so a longer one is injected only. (It was 1 MB,
 * a third of the drive's CPU in the query parser and in Ajv counting characters, for nothing a
 * client can reach.)
 */
const LONGEST_QUERY = http.maxHeaderSize;

// ---------------------------------------------------------------------------------------------
// The operations, from the OpenAPI document

export interface Schema {
  type?: string;
  maxLength?: number;
  minimum?: number;
  maxItems?: number;
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  const?: unknown;
  properties?: Record<string, Schema>;
}

export interface Operation {
  readonly method: string;
  /** As documented: `/api/v2/me/projects/{projectId}`. */
  readonly path: string;
  readonly query: ReadonlyArray<{ name: string; schema: Schema }>;
  readonly pathParams: readonly string[];
  readonly body: Readonly<Record<string, Schema>> | undefined;
  readonly upload: boolean;
  readonly access: Access;
  /** OAuth's token endpoint answers its own errors as {error, error_description}. */
  readonly oauth?: boolean;
}

const documentedPath = (spec: RouteSpec) => `/api/v2${spec.path.replace(/:(\w+)/g, '{$1}')}`;
const SPECS = [...routeTable({ version: 'test', flavour: 'private' }), ...adminRoutes];
export const SPEC_OF = new Map(SPECS.map((spec) => [`${spec.method} ${documentedPath(spec)}`, spec]));

export function operationsOf(document: { paths: Record<string, Record<string, any>> }): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [lower, operation] of Object.entries(methods)) {
      const method = lower.toUpperCase();
      const spec = SPEC_OF.get(`${method} ${path}`);
      const parameters: Array<{ in: string; name: string; schema: Schema }> = operation.parameters ?? [];
      operations.push({
        method,
        path,
        query: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        body: operation.requestBody?.content?.['application/json']?.schema?.properties,
        upload: spec?.upload === true,
        access: spec?.access ?? (operation.security === undefined ? 'anonymous' : 'user'),
      });
    }
  }
  return operations;
}

/**
 * Routes outside the OpenAPI document that take input from the network: the agent protocol (as
 * an agent), OAuth's token endpoint and the dashboard's sign-in.
 */
export function undocumentedOperations(): Operation[] {
  const properties = (schema: unknown) => (schema as { properties: Record<string, Schema> }).properties;
  const agent = (method: string, path: string, body?: unknown, query?: unknown): Operation => ({
    method,
    path: `${PROTOCOL_PREFIX}${path}`,
    query: Object.entries(query === undefined ? {} : properties(query)).map(([name, schema]) => ({ name, schema })),
    pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!),
    body: body === undefined ? undefined : properties(body),
    upload: false,
    access: 'agent',
  });
  const untyped = (...names: string[]) => Object.fromEntries(names.map((name) => [name, {} as Schema]));
  return [
    agent('POST', '/hello', HelloRequest),
    agent('POST', '/heartbeat', HeartbeatRequest),
    agent('POST', '/claims', ClaimRequest),
    agent('POST', '/device-runs/{deviceRunId}/progress', ProgressReport),
    agent('POST', '/device-runs/{deviceRunId}/result', ResultReport),
    agent('PUT', '/device-runs/{deviceRunId}/artifacts', undefined, ArtifactQuery),
    agent('GET', '/device-runs/{deviceRunId}/files/{fileId}'),
    agent('POST', '/devices/{deviceId}/cleaned', CleanedReport),
    ...['GET', 'POST'].map((method) => ({
      method,
      path: '/oauth/token',
      query:
        method === 'GET'
          ? Object.entries(untyped('client_id', 'grant_type', 'username', 'password', 'refresh_token')).map(
              ([name, schema]) => ({ name, schema }),
            )
          : [],
      pathParams: [],
      body: method === 'POST' ? untyped('client_id', 'grant_type', 'username', 'password', 'refresh_token') : undefined,
      upload: false,
      access: 'anonymous' as const,
      oauth: true,
    })),
    {
      method: 'POST',
      path: '/auth/session',
      query: [],
      pathParams: [],
      body: untyped('email', 'password'),
      upload: false,
      access: 'anonymous',
    },
    {
      method: 'GET',
      path: '/auth/session',
      query: [],
      pathParams: [],
      body: undefined,
      upload: false,
      access: 'anonymous',
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Hostile values

/** Each Accept header with the format the API must answer errors in (docs/api.md#formats). */
export const ACCEPTS: ReadonlyArray<{ header: string | undefined; json: boolean }> = [
  { header: undefined, json: false },
  { header: 'application/json', json: true },
  { header: 'application/xml', json: false },
  { header: '*/*', json: false },
  { header: 'text/html,application/xhtml+xml', json: false },
  { header: 'application/json;q=0.5, application/xml', json: false },
  { header: 'application/xml;q=0.1, application/json', json: true },
  { header: 'application/json;q=abc', json: false },
  { header: 'application/json;q=0', json: false },
];

const BAD_IDS = [
  '0',
  '-1',
  '9223372036854775808',
  '9223372036854775807',
  '18446744073709551616',
  '99999999999999999999',
  'abc',
  '1e3',
  '1.5',
  '0x1F',
  '+1',
  '%201',
  '1%00',
  '%00',
  '%01',
  '%ff',
  '%c3%28',
  '%ed%a0%80',
  '%EF%BC%91',
  "1'",
  '1%3BDROP',
  'null',
  'NaN',
  'Infinity',
  '9'.repeat(199),
  '9'.repeat(400),
];

/** Percent-encoded byte sequences that are not UTF-8 (and a NUL, and an escape sequence). */
const BAD_UTF8_QUERY = ['%ff%fe', '%c3%28', '%ed%a0%80', '%f4%90%80%80', '%80', '%c0%af', '%00', '%1b%5b31m'];
const BAD_UTF8_BYTES = [
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0x80]),
];

export const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
export const DEEP = 10_000;

/** JSON texts that no typed parameter can take, whatever coercion does (as a property's value). */
const UNCOERCIBLE = ['{}', '{"a":{"b":[1,2]}}', '[[1, 2]]', '[]', '[{"id":1}]'];
/** The same for array parameters, which take `[]` and unwrap one level of nesting. */
const UNCOERCIBLE_ARRAY = ['{}', '{"a":{"b":[1,2]}}', '[{"id":1}]', '[[1, 2]]'];
/** JSON texts of the wrong type, which coercion may turn into something acceptable. */
const LOOSE = [
  'null',
  'true',
  'false',
  '0',
  '-1',
  '1.5',
  '1e308',
  '-0',
  '"abc"',
  '""',
  '"1e3"',
  '"\\u0000"',
  '"\\ud800"',
  '"\\u0001\\u001b[31m"',
  '"<a>&amp;]]>"',
  '9007199254740993',
  '1e20',
  '[1e20]',
  '9223372036854775807',
  '[-0]',
];

/** List grammar (docs/api.md#lists) at its edges: numbers no 64-bit column holds, odd lists, long sorts. */
const LIST_PARAMETERS = [
  'filter=id_eq_1e20',
  'filter=id_gt_1.5',
  'filter=id_in_1|1e400|-0',
  'filter=createTime_after_9223372036854775807',
  'filter=createTime_on_-1e30',
  'filter=id_eq_0x10',
  'filter=name_eq_%00',
  'filter=name_like_%25%25%25%5C',
  'filter=id_isnull',
  `filter=name_in_${'|'.repeat(3000)}`,
  'filter=id_notin_',
  'filter=;;;;',
  'filter=n_id_eq_1&filter=d_createTime_before_1e15',
  `sort=${'id_a:'.repeat(200)}`,
  'sort=id_a:id_d:createTime_x',
  'search=%25%5C_',
  `search=${'%20'.repeat(900)}`,
  'offset=2147483647&limit=2147483647',
  'limit=0&offset=99999',
];

function isTyped(schema: Schema | undefined): boolean {
  return (
    schema !== undefined &&
    (schema.type !== undefined || schema.anyOf !== undefined || schema.enum !== undefined || schema.const !== undefined)
  );
}

/** Query text of the wrong type for `schema`, and whether refusing it is the only right answer. */
function wrongQueryValues(schema: Schema): Array<[string, boolean]> {
  switch (schema.type) {
    case 'integer':
    case 'number':
      return [
        ['abc', true],
        ['1.5', schema.type === 'integer'],
        ['NaN', true],
        ['1 1', true],
        ['1e400', true],
        ['-1', (schema.minimum ?? -1) >= 0],
        ['0x10', false],
        ['', false],
      ];
    case 'boolean':
      return [
        ['maybe', true],
        ['2', true],
        ['yes', true],
        ['', false],
      ];
    case 'string':
      return schema.maxLength === undefined
        ? [['%01', false]]
        : [
            ['x'.repeat(schema.maxLength + 1), true],
            ['%01', false],
          ];
    default:
      return [['%01', false]];
  }
}

// ---------------------------------------------------------------------------------------------
// Generated requests

export interface Hostile {
  readonly label: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload?: string | Buffer;
  /** True when only a 4xx is a right answer; false when the input is odd but may be accepted. */
  readonly mustFail: boolean;
  readonly oauth?: boolean;
}

const BOUNDARY = 'HostileBoundary7MA4YWxk';

export function multipartBody(
  parts: ReadonlyArray<{ headers: string; content: string | Buffer }>,
  options: { boundary?: string; close?: boolean } = {},
): Buffer {
  const boundary = options.boundary ?? BOUNDARY;
  const chunks: Buffer[] = [];
  for (const part of parts)
    chunks.push(
      Buffer.from(`--${boundary}\r\n${part.headers}\r\n\r\n`),
      Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content),
      Buffer.from('\r\n'),
    );
  if (options.close !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

export const filePart = (fileName: string | Buffer, content: string | Buffer = 'some bytes', field = 'file') => ({
  headers: `Content-Disposition: form-data; name="${field}"; filename="${fileName}"\r\nContent-Type: application/octet-stream`,
  content,
});

export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** Malformed and odd uploads: [label, content type, body, must fail]. */
function hostileUploads(): Array<[string, string, Buffer, boolean]> {
  const valid = multipartBody([filePart('data.bin')]);
  return [
    ['multipart without boundary', 'multipart/form-data', valid, true],
    ['boundary mismatch', 'multipart/form-data; boundary=SomethingElse', valid, true],
    ['cut in the file', MULTIPART_TYPE, valid.subarray(0, valid.length - 30), true],
    ['no closing boundary', MULTIPART_TYPE, multipartBody([filePart('data.bin')], { close: false }), true],
    ['part not named file', MULTIPART_TYPE, multipartBody([filePart('data.bin', 'x', 'upload')]), true],
    [
      'fields only',
      MULTIPART_TYPE,
      multipartBody([{ headers: 'Content-Disposition: form-data; name="name"', content: 'x' }]),
      true,
    ],
    ['empty file', MULTIPART_TYPE, multipartBody([filePart('empty.bin', '')]), true],
    ['empty body', MULTIPART_TYPE, Buffer.alloc(0), true],
    ['JSON in a multipart', MULTIPART_TYPE, Buffer.from('{"file": "x"}'), true],
    [
      'part without disposition',
      MULTIPART_TYPE,
      multipartBody([{ headers: 'Content-Type: text/plain', content: 'x' }]),
      true,
    ],
    ['multipart/mixed', `multipart/mixed; boundary=${BOUNDARY}`, valid, true],
    ['two files', MULTIPART_TYPE, multipartBody([filePart('one.bin', 'one'), filePart('two.bin', 'two')]), false],
    [
      '40 parts',
      MULTIPART_TYPE,
      multipartBody(
        Array.from({ length: 40 }, (_, i) => ({
          headers: `Content-Disposition: form-data; name="f${i}"`,
          content: 'x',
        })),
      ),
      false,
    ],
    ['traversing file name', MULTIPART_TYPE, multipartBody([filePart('../../../../etc/passwd')]), false],
    ['absolute file name', MULTIPART_TYPE, multipartBody([filePart('/etc/shadow')]), false],
    ['NUL and CR in file name', MULTIPART_TYPE, multipartBody([filePart('a\u0000b\rc.apk')]), false],
    ['file name of 10,000 characters', MULTIPART_TYPE, multipartBody([filePart('n'.repeat(10_000))]), false],
    [
      'file name not UTF-8',
      MULTIPART_TYPE,
      multipartBody([
        filePart(Buffer.concat([Buffer.from('x'), BAD_UTF8_BYTES[0]!, Buffer.from('.apk')]).toString('latin1')),
      ]),
      false,
    ],
    [
      'header line of 100 KB',
      MULTIPART_TYPE,
      multipartBody([
        { headers: `Content-Disposition: form-data; name="file"; filename="${'h'.repeat(100_000)}"`, content: 'x' },
      ]),
      false,
    ],
    [
      'APK that is not one',
      MULTIPART_TYPE,
      multipartBody([filePart('app.apk', 'PK\u0003\u0004 not really a zip')]),
      false,
    ],
    ['preamble garbage', MULTIPART_TYPE, Buffer.concat([Buffer.from('garbage before\r\n'), valid]), false],
  ];
}

/** Root bodies sent as application/json: [label, body, must fail]. */
const ROOT_BODIES: ReadonlyArray<[string, string | Buffer, boolean]> = [
  ['empty JSON body', '', false],
  ['unfinished JSON', '{"a": ', true],
  ['JSON array', '[1,2]', true],
  ['JSON string', '"text"', true],
  ['JSON number', '1e999999', true],
  ['JSON true', 'true', true],
  ['JSON null', 'null', false],
  ['trailing garbage', '{"a":1} garbage', true],
  ['__proto__', '{"__proto__": {"admin": true}}', true],
  ['constructor.prototype', '{"constructor": {"prototype": {"admin": true}}}', true],
  [`${DEEP} nested arrays`, deepArray(DEEP), true],
  [`${DEEP} nested objects`, deepObject(DEEP), false],
  ['10,000 keys', `{${Array.from({ length: 10_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`, false],
  ['byte order mark', '\ufeff{}', false],
  ['invalid UTF-8 bytes', Buffer.concat([Buffer.from('{"'), BAD_UTF8_BYTES[0]!, Buffer.from('":1}')]), false],
  ['body over the limit', `{"a":"${'x'.repeat(MB + 10)}"}`, true],
];

/** Bodies under other content types: [label, content type, body, must fail]. */
const CONTENT_TYPES: ReadonlyArray<[string, string | undefined, string | Buffer, boolean]> = [
  ['text/plain', 'text/plain', 'hello', true],
  ['XML body', 'application/xml', '<apiProject><name>x</name></apiProject>', true],
  ['octet-stream', 'application/octet-stream', Buffer.from([0, 1, 2, 255]), true],
  ['JSON declared, form sent', 'application/json', 'name=x&a=b', true],
  ['upper-case JSON type with bad JSON', 'APPLICATION/JSON', '{', true],
  ['UTF-16 JSON', 'application/json; charset=utf-16', Buffer.from('{"name":"x"}', 'utf16le'), false],
  ['garbage content type', ';;;===', '{}', false],
  ['content type of 20 KB', `application/json; ${'p=q; '.repeat(4000)}`, '{}', false],
  ['no content type', undefined, 'name=x', false],
  ['gzip claimed, plain sent', 'application/json', '{}', false],
  ['form with bad percent-encoding', 'application/x-www-form-urlencoded', 'a=%zz&b=%', false],
  ['form over the limit', 'application/x-www-form-urlencoded', `a=${'x'.repeat(MB + 10)}`, true],
  ['multipart to a non-upload route', MULTIPART_TYPE, multipartBody([filePart('x.bin')]), false],
];

export function generate(operation: Operation, ids: Ids, rng: Prng): Hostile[] {
  const inputs: Hostile[] = [];
  const carriesBody = operation.method !== 'GET';
  const bodyFields = Object.entries(operation.body ?? {});
  const add = (
    label: string,
    options: {
      url?: string;
      query?: string;
      headers?: Record<string, string>;
      payload?: string | Buffer;
      method?: string;
      mustFail: boolean;
    },
  ) => {
    const accept = rng.pick(ACCEPTS);
    const headers: Record<string, string> = { ...options.headers };
    if (accept.header !== undefined) headers.accept = accept.header;
    const base = options.url ?? urlOf(operation, ids, rng);
    const url = options.query === undefined ? base : `${base}${base.includes('?') ? '&' : '?'}${options.query}`;
    inputs.push({
      label,
      method: options.method ?? operation.method,
      url,
      headers,
      payload: options.payload,
      mustFail: options.mustFail,
      oauth: operation.oauth,
    });
  };
  const json = (payload: string | Buffer, label: string, mustFail: boolean, extra: Record<string, string> = {}) =>
    add(label, { payload, headers: { 'content-type': 'application/json', ...extra }, mustFail });

  // Path ids: every parameter, a few bad ids each (the whole list over the run).
  for (const name of operation.pathParams) {
    for (let i = 0; i < 3; i++) {
      const bad = rng.pick(BAD_IDS);
      add(`path ${name}=${bad.slice(0, 24)}`, { url: urlOf(operation, ids, rng, { [name]: bad }), mustFail: true });
    }
  }

  // Query parameters: declared ones (and, on writes, body parameters, which may arrive there too).
  const queryFields = [
    ...operation.query.map((q) => [q.name, q.schema] as const),
    ...(carriesBody && !operation.upload ? bodyFields : []),
  ];
  for (const [name, schema] of queryFields) {
    const wrong = wrongQueryValues(schema);
    for (const [value, strict] of [rng.pick(wrong), rng.pick(wrong)]) {
      add(`query ${name} wrong type`, {
        query: `${name}=${encodeURIComponent(value).replace(/%2501/g, '%01')}`,
        mustFail: strict && isTyped(schema),
      });
    }
    add(`query ${name} of ${LONGEST_QUERY / 1024} KB`, {
      query: `${name}=${'q'.repeat(LONGEST_QUERY)}`,
      mustFail: schema.maxLength !== undefined || schema.type === 'integer' || schema.type === 'boolean',
    });
    add(`query ${name} not UTF-8`, {
      query: `${name}=${rng.pick(BAD_UTF8_QUERY)}${rng.pick(BAD_UTF8_QUERY)}`,
      mustFail: false,
    });
    const scalar =
      schema.type === 'integer' || schema.type === 'boolean' || (schema.type === 'string' && schema.enum === undefined);
    add(`query ${name} twice`, { query: `${name}=1&${name}=2`, mustFail: scalar && !carriesBody });
    add(`query ${name}[] and ${name}[x]`, { query: `${name}[]=1&${name}[x][y]=2`, mustFail: false });
  }
  if (operation.query.some((q) => q.name === 'filter')) {
    for (let i = 0; i < 3; i++) add('list parameters', { query: rng.pick(LIST_PARAMETERS), mustFail: false });
  }
  add('unknown query parameters', {
    query: `zz=${rng.pick(BAD_UTF8_QUERY)}&access_token=${rng.pick(BAD_UTF8_QUERY)}&a[b][c]=1&&=&%=`,
    mustFail: false,
  });

  if (!carriesBody) {
    json(rng.pick(['{', deepArray(DEEP), '[1]']), 'GET with a hostile body', false);
    return inputs;
  }

  // Body fields, one at a time, in JSON (the rest of the body left out).
  for (const [name, schema] of bodyFields) {
    const typed = isTyped(schema);
    const field = (value: string | Buffer) =>
      Buffer.isBuffer(value)
        ? Buffer.concat([Buffer.from(`{"${name}":`), value, Buffer.from('}')])
        : `{"${name}":${value}}`;
    json(field(rng.pick(schema.type === 'array' ? UNCOERCIBLE_ARRAY : UNCOERCIBLE)), `body ${name} uncoercible`, typed);
    json(field(rng.pick(LOOSE)), `body ${name} wrong type`, false);
    json(field(rng.pick(LOOSE)), `body ${name} wrong type`, false);
    json(field(`"${'s'.repeat(MB)}"`), `body ${name} of 1 MB`, true);
    json(field(`"${'s'.repeat(900 * 1024)}"`), `body ${name} of 900 KB`, schema.maxLength !== undefined);
    json(
      field(Buffer.concat([Buffer.from('"'), rng.pick(BAD_UTF8_BYTES), Buffer.from('"')])),
      `body ${name} not UTF-8`,
      false,
    );
    json(field(rng.chance(0.5) ? deepArray(DEEP) : deepObject(DEEP)), `body ${name} nested ${DEEP} deep`, typed);
    json(`{"${name}":"a","${name}":{"x":1}}`, `body ${name} duplicated key`, typed);
    add(`form ${name} twice`, {
      payload: `${name}=1&${name}[]=2`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      mustFail: typed && schema.type !== 'array' && schema.anyOf === undefined,
    });
    add(`form ${name} not UTF-8`, {
      payload: `${name}=${rng.pick(BAD_UTF8_QUERY)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      mustFail: false,
    });
  }

  // Whole bodies and content types.
  for (const [label, body, mustFail] of ROOT_BODIES) {
    if (rng.chance(0.6) || label.startsWith('JSON') || label.includes('nested'))
      json(body, label, mustFail && !operation.upload);
  }
  for (const [label, type, body, mustFail] of CONTENT_TYPES) {
    if (!rng.chance(0.6)) continue;
    const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
    if (label.startsWith('gzip')) headers['content-encoding'] = 'gzip';
    add(label, { payload: body, headers, mustFail: mustFail && !operation.upload });
  }
  if (operation.upload) {
    for (const [label, type, body, mustFail] of hostileUploads())
      add(`upload: ${label}`, { payload: body, headers: { 'content-type': type }, mustFail });
  }
  add('wrong method', { method: rng.pick(['PUT', 'PATCH']), mustFail: true });
  return inputs;
}

/** The operation's URL for the world, in one of its aliases (docs/api.md#paths). */
function urlOf(operation: Operation, ids: Ids, rng: Prng, override: Record<string, string> = {}): string {
  let path = fillPath(operation.path, ids, override);
  if (path.startsWith('/api/v2/me') && rng.chance(0.25))
    path = path.replace('/api/v2/me', `/api/v2/users/${ids.userId}`);
  if (rng.chance(0.4)) path = path.replace(/^\/api\/v2/, '/api');
  return path;
}

// ---------------------------------------------------------------------------------------------
// Judging answers

/** Characters XML 1.0 forbids: an error message carrying one makes the whole answer unreadable. */
export const NOT_XML =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const INTERNALS = /SQLITE_|sqlite3|syntax error at|relation "|node_modules|\.ts:\d+:\d+|\n\s+at /;

export function problemWith(
  input: Hostile,
  status: number,
  headers: Record<string, unknown>,
  text: string,
): string | undefined {
  if (status >= 500) return `answered ${status}: ${text.slice(0, 200)}`;
  if (status < 400)
    return input.mustFail ? `accepted malformed input with ${status}: ${text.slice(0, 120)}` : undefined;
  const type = String(headers['content-type'] ?? '');
  if (input.oauth && type.startsWith('application/json') && text.startsWith('{"error":')) {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (typeof body.error !== 'string' || typeof body.error_description !== 'string')
      return `OAuth error without error and error_description: ${text.slice(0, 160)}`;
    return undefined;
  }
  const wantJson = ACCEPTS.find((accept) => accept.header === input.headers.accept)!.json;
  let message: unknown;
  let statusCode: unknown;
  if (wantJson) {
    if (!type.startsWith('application/json'))
      return `error in ${type || 'no content type'}, not JSON: ${text.slice(0, 120)}`;
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      return `error body is not JSON: ${text.slice(0, 120)}`;
    }
    if (body === null || typeof body !== 'object' || Object.keys(body).sort().join() !== 'message,statusCode')
      return `error body is not {message, statusCode}: ${text.slice(0, 160)}`;
    ({ message, statusCode } = body);
  } else {
    if (!type.startsWith('application/xml'))
      return `error in ${type || 'no content type'}, not XML: ${text.slice(0, 120)}`;
    if (!text.startsWith('<?xml version="1.0" encoding="UTF-8"?><apiExceptionMessage>'))
      return `error is not an apiExceptionMessage: ${text.slice(0, 160)}`;
    if (NOT_XML.test(text)) return `error XML carries characters XML forbids: ${JSON.stringify(text.slice(0, 160))}`;
    const element = parseXml(text).apiExceptionMessage;
    message = element?.message;
    statusCode = Number(element?.statusCode);
  }
  if (statusCode !== status) return `error says statusCode ${String(statusCode)} but the answer is ${status}`;
  if (typeof message !== 'string' || message.trim() === '') return `error without a message: ${text.slice(0, 120)}`;
  if (INTERNALS.test(message)) return `error message shows internals: ${message.slice(0, 200)}`;
  return undefined;
}
