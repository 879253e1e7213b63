/**
 * The OpenAPI document is the API's contract: every documented operation declares what it answers,
 * and the answers of a typical flow (uploads, projects, runs and their results, devices, account,
 * operators, errors) have exactly the declared shape.
 *
 * The compiled JSON serializer writes the schema's fields only, so a field a presenter adds without
 * declaring it would vanish from the answer without a sound. Hence each answer is checked as the
 * presenter made it, before serialization, against its schema made strict (no undeclared field),
 * and the bytes sent must be those JSON.stringify writes of it.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as JsonEncoder from '../../src/api/encode/json.ts';
import type { Rep } from '../../src/api/present/representation.ts';
import { notWellFormed } from '../support/any-text.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, multipart } from '../support/harness.ts';
import { createHarness } from '../support/harness.ts';
import { type World, fillPath, seedWorld } from '../support/world.ts';

/** What the presenters handed to the JSON encoder, request by request. */
const presented = vi.hoisted(() => [] as Rep[]);
const plainJson = vi.hoisted(() => ({ encode: undefined as ((value: Rep) => string) | undefined }));

vi.mock('../../src/api/encode/json.ts', async (importOriginal) => {
  const original = await importOriginal<typeof JsonEncoder>();
  plainJson.encode = (value) => original.encodeJson(value);
  return {
    ...original,
    encodeJson: (value: Rep, stringify?: JsonEncoder.Stringify) => {
      presented.push(value);
      return original.encodeJson(value, stringify);
    },
  };
});

const SERVER_SIDE = 7;

type Schema = Record<string, any>;
interface Operation {
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

/** The schema with every object closed: a field it does not declare is an error. */
function strict(schema: Schema): Schema {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Schema = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as Schema).map(([name, property]) => [name, strict(property)]))
        : strict(value),
    ]),
  );
  if (copy.properties !== undefined && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

function operationsOf(document: { paths: Record<string, Record<string, any>> }): Operation[] {
  return Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
      responses: operation.responses,
    })),
  );
}

describe.each(ENGINES)('answers against the OpenAPI document (%s)', (engine) => {
  let h: Harness;
  let world: World;
  let agent: FakeAgent;
  let operations: Operation[];
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = new Map<string, ValidateFunction>();
  /** `METHOD template` of every operation sampled with a 2xx answer. */
  const sampled = new Set<string>();
  let checked = 0;

  beforeAll(async () => {
    h = await createHarness(engine, { limits: { claimWaitMs: 50 } });
    world = await seedWorld(h, { role: 'ADMIN' });
    agent = await fakeAgent(h.app, h.ctx, 'host-1');
    await agent.hello([androidDevice('a1', 'Pixel 8')]);
    await agent.cleanAll();
    const answer = await h.app.inject({ method: 'GET', url: '/api/v2/openapi.json' });
    operations = operationsOf(JSON.parse(answer.body));
  }, 60_000);
  afterAll(async () => h?.close());

  function operationOf(method: string, path: string): Operation {
    const matching = operations.filter((operation) => operation.method === method && operation.pattern.test(path));
    // A literal segment wins over a parameter (`/me/runs/config` over `/me/runs/{runId}`), as in the router.
    matching.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    const operation = matching[0];
    if (operation === undefined) throw new Error(`${method} ${path} is not in the OpenAPI document`);
    return operation;
  }

  function validatorFor(operation: Operation, status: number): ValidateFunction {
    const key = status >= 500 ? '5XX' : status >= 400 ? '4XX' : String(status);
    const cacheKey = `${operation.method} ${operation.template} ${key}`;
    let validate = validators.get(cacheKey);
    if (validate === undefined) {
      const schema = operation.responses[key]?.content?.['application/json']?.schema;
      if (schema === undefined) throw new Error(`${cacheKey}: the document declares no JSON answer`);
      validate = ajv.compile(strict(schema));
      validators.set(cacheKey, validate);
    }
    return validate;
  }

  /** One request, as JSON; its answer is checked against the document. */
  async function request(
    method: string,
    path: string,
    options: { body?: unknown; payload?: Buffer; headers?: Record<string, string> } = {},
  ) {
    presented.length = 0;
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${world.user.key}:`).toString('base64')}`,
      ...options.headers,
    };
    let payload: string | Buffer | undefined = options.payload;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await h.app.inject({ method: method as 'GET', url: path, headers, payload });
    const operation = operationOf(method, path.split('?')[0]!);
    const where = `${method} ${path} → ${response.statusCode}`;
    if (response.statusCode < 300) sampled.add(`${method} ${operation.template}`);
    if (response.statusCode === 204) {
      expect(operation.responses['204'], where).toBeDefined();
      return response;
    }
    if (!String(response.headers['content-type']).startsWith('application/json')) {
      // Bytes: documented as such.
      expect(operation.responses[String(response.statusCode)]?.content?.['application/json'], where).toBeUndefined();
      expect(operation.responses[String(response.statusCode)], where).toBeDefined();
      return response;
    }
    const value = presented.at(-1);
    expect(value, `${where}: no presented answer`).toBeDefined();
    const written = plainJson.encode!(value!);
    // What the compiled serializer sent is what JSON.stringify writes of what was presented.
    expect(response.body, where).toBe(written);
    const validate = validatorFor(operation, response.statusCode);
    expect(validate(JSON.parse(written)) ? null : { where, errors: validate.errors }).toBeNull();
    checked += 1;
    return response;
  }

  const json = async (method: string, path: string, body?: unknown) => {
    const response = await request(method, path, { body });
    expect(response.statusCode, `${method} ${path}: ${response.body}`).toBeLessThan(300);
    return response.statusCode === 204 ? undefined : JSON.parse(response.body);
  };

  it('declares for every operation what it answers on success and on error', () => {
    expect(operations.length).toBeGreaterThan(100);
    for (const operation of operations) {
      const where = `${operation.method} ${operation.template}`;
      const success = Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status));
      expect(success, where).toHaveLength(1);
      const answer = operation.responses[success[0]!]!;
      if (success[0] !== '204') {
        const schemas = Object.values(answer.content ?? {}).map((content) => content.schema);
        expect(schemas.length, where).toBeGreaterThan(0);
        for (const schema of schemas) expect(schema?.type ?? schema?.anyOf, where).toBeDefined();
      }
      for (const range of ['4XX', '5XX'])
        expect(operation.responses[range]?.content?.['application/json']?.schema?.title, `${where} ${range}`).toBe(
          'apiExceptionMessage',
        );
    }
  });

  it('answers a typical flow in the declared shapes, in JSON as presented and in XML', async () => {
    const { ids } = world;
    // Uploads, a project, a run that a device host runs and reports.
    const uploaded = multipart('notes.txt', 'some data');
    const file = JSON.parse(
      (await request('POST', '/api/v2/me/files', { payload: uploaded.body, headers: uploaded.headers })).body,
    );
    expect(file.id).toBeGreaterThan(0);
    const legacy = multipart('data.bin', 'legacy data');
    await request('POST', `/api/v2/me/projects/${ids.projectId}/files/data`, {
      payload: legacy.body,
      headers: legacy.headers,
    });
    const project = await json('POST', '/api/v2/me/projects', { name: 'Contract', description: 'checked' });
    await json('POST', `/api/v2/me/projects/${project.id}`, {
      description: 'changed',
      archivingStrategy: 'RUNS',
      archivingItemCount: '5',
    });
    const app = await fixtures.file(h.ctx, world.user.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
    const tests = await fixtures.file(h.ctx, world.user.user, {
      name: 'tests.zip',
      inputType: 'TEST',
      properties: { entry_script: 'run-tests.sh' },
    });
    const config = {
      osType: 'ANDROID',
      frameworkId: SERVER_SIDE,
      projectId: project.id,
      files: [
        { id: app.id, action: 'INSTALL' },
        { id: tests.id, action: 'RUN_TEST' },
      ],
      testRunParameters: [{ key: 'K', value: 'V' }],
      deviceIds: [agent.deviceIds.get('a1')!],
    };
    await json('POST', '/api/v2/me/runs/config', config);
    const run = await json('POST', '/api/v2/runs', config);
    const { assignments } = await agent.claim(['a1']);
    const session = assignments[0]!.deviceRunId;
    const reported = await agent.finish(session, 'FAILED', [
      testCase('passes'),
      testCase('fails', 'FAILED'),
      testCase('skipped', 'SKIPPED'),
    ]);
    expect(reported.status, reported.text).toBe(200);
    await json('POST', `/api/v2/me/projects/${project.id}/runs/${run.id}/retry`, {});

    // Every documented read, with the world's ids and then with this flow's run.
    const reads = operations.filter((operation) => operation.method === 'GET');
    for (const operation of reads) {
      const path = fillPath(operation.template, ids);
      const response = await request('GET', path);
      expect(response.statusCode, `GET ${path}: ${response.body}`).toBe(200);
      const xml = await h.app.inject({
        method: 'GET',
        url: path,
        headers: {
          accept: 'application/xml',
          authorization: `Basic ${Buffer.from(`${world.user.key}:`).toString('base64')}`,
        },
      });
      expect(xml.statusCode, path).toBe(200);
      if (String(xml.headers['content-type']).startsWith('application/xml') && !path.endsWith('junit.xml')) {
        expect(String(xml.headers['content-type']), path).toBe('application/xml; charset=utf-8');
        expect(notWellFormed(xml.body), path).toBeNull();
      }
    }
    const flowIds = { ...ids, projectId: project.id, runId: run.id, deviceRunId: session, deviceSessionId: session };
    for (const template of [
      '/api/v2/me/projects/{projectId}/runs/{runId}',
      '/api/v2/me/projects/{projectId}/runs/{runId}/device-sessions',
      '/api/v2/me/projects/{projectId}/runs/{runId}/device-runs',
      '/api/v2/me/device-sessions/{deviceSessionId}/test-case-runs',
      '/api/v2/me/device-sessions/{deviceSessionId}/steps',
      '/api/v2/me/projects/{projectId}/runs/{runId}/device-runs/{deviceRunId}/states',
      '/api/v2/me/projects',
      '/api/v2/me/runs',
      '/api/v2/me/device-sessions',
      '/api/v2/me/runs/config',
    ]) {
      await json('GET', fillPath(template, flowIds));
    }
    await json('GET', '/api/v2/me/projects?limit=1&embedRuns=2');
    await json('GET', '/api/v2/me/device-groups?withPublic=true');

    // Config, groups, recorder, account, operators.
    await json('POST', `/api/v2/me/projects/${project.id}/config`, {
      timeout: 300,
      usedDeviceGroupId: ids.groupId,
      applicationPassword: 'secret',
    });
    const parameter = await json('POST', `/api/v2/me/projects/${project.id}/config/parameters`, {
      key: 'NAME',
      value: 'value',
    });
    await json('DELETE', `/api/v2/me/projects/${project.id}/config/parameters/${parameter.id}`);
    const group = await json('POST', '/api/v2/me/device-groups', { displayName: 'Contract group', osType: 'ANDROID' });
    await json('POST', `/api/v2/me/device-groups/${group.id}`, { displayName: 'Renamed' });
    await json('POST', `/api/v2/me/device-groups/${group.id}/devices`, { deviceIds: [agent.deviceIds.get('a1')!] });
    await json('DELETE', `/api/v2/me/device-groups/${group.id}/devices/${agent.deviceIds.get('a1')!}`);
    await json('POST', `/api/v2/me/device-groups/${group.id}/selectors`, { selectorIds: [ids.labelId!] });
    await json('DELETE', `/api/v2/me/device-groups/${group.id}/selectors/${ids.labelId!}`);
    await json('DELETE', `/api/v2/me/device-groups/${group.id}`);
    await json('POST', '/api/v2/me/recorder/authorizations', {});
    const recording = await json('POST', '/api/v2/me/recordings', { name: 'Recorded', osType: 'ANDROID' });
    await json('POST', `/api/v2/me/recordings/${recording.id}/steps`, { action: 'TAP', target: 'button' });
    await json('POST', `/api/v2/me/recordings/${recording.id}/finish`, {});
    await json('DELETE', '/api/v2/me/recorder/authorizations/current');
    await json('POST', '/api/v2/me', { organization: 'Example', timeZone: 'Europe/Helsinki' });
    const account = await json('POST', '/api/v2/admin/users', {
      email: 'contract@example.com',
      password: 'password-1234',
      plan: 'GOLD',
    });
    await json('POST', `/api/v2/admin/users/${account.id}`, { plan: 'PLATINUM', storageQuotaBytes: 1e9 });
    await json('POST', `/api/v2/admin/devices/${agent.deviceIds.get('a1')!}`, { enabled: false });
    // Only a NOT_OPERATIONAL device returns to service: a 409 here, in the error envelope.
    expect(
      (await request('POST', `/api/v2/admin/devices/${agent.deviceIds.get('a1')!}/return-to-service`, { body: {} }))
        .statusCode,
    ).toBe(409);
    await json(
      'POST',
      `/api/v2/me/projects/${ids.projectId}/runs/${ids.runId}/device-runs/${ids.deviceRunId}/abort`,
      {},
    );
    await json('POST', `/api/v2/me/device-sessions/${ids.deviceSessionId}/retry`, {});
    await json('POST', `/api/v2/me/projects/${project.id}/runs/${run.id}/abort`, {});

    // Errors: the same envelope whatever raised them.
    for (const [method, path, body] of [
      ['GET', '/api/v2/me/projects/999999', undefined],
      ['POST', '/api/v2/me/projects', { name: 'x'.repeat(2000) }],
      ['POST', '/api/v2/runs', { osType: 'WINDOWS' }],
      ['GET', `/api/v2/me/recordings/${recording.id}x`, undefined],
    ] as const) {
      const response = await request(method, path, { body });
      expect(response.statusCode, path).toBeGreaterThanOrEqual(400);
    }

    // Deletions, then the one write that changes the key.
    await json('DELETE', `/api/v2/me/files/${file.id}`);
    await json('DELETE', `/api/v2/me/projects/${ids.projectId}/runs/${ids.runId}`);
    await json('DELETE', `/api/v2/me/projects/${project.id}`);
    await json('POST', '/api/v2/me/password', { currentPassword: 'password-1234', newPassword: 'password-5678' });
    const renewed = await json('POST', '/api/v2/me/reset-api-key', {});
    expect(renewed.apiKey).toMatch(/\w{20,}/);

    const documentedReads = reads.map((operation) => `GET ${operation.template}`);
    expect(documentedReads.filter((read) => !sampled.has(read))).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  }, 120_000);
});
