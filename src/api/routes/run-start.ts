/**
 * Starting runs (docs/api.md#starting-runs): the modern TestRunConfig (`POST /runs`), the legacy
 * start with only a projectId (the stored project config), the legacy project route, validate-only.
 */
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { runClientOf } from '../../domain/clients.ts';
import { type RunRequest, isLegacyRequest, parseRunRequest } from '../../domain/run-config.ts';
import { PLAN_MAX_TIMEOUT_SECONDS, type User } from '../../domain/users.ts';
import type { Context } from '../../services/context.ts';
import { legacyRunRequest } from '../../services/legacy-run.ts';
import { planRun, startRun } from '../../services/start-run.ts';
import { presentRunConfigDefaults, presentRunPlan } from '../present/run-plan.ts';
import { ApiTestRun, ApiTestRunPlan, presentTestRun } from '../present/test-run.ts';
import { type RouteSpec, created, ok, route } from '../route.ts';

const TAGS = ['Starting runs'];

const field = (description: string) => Type.Optional(Type.Unknown({ description }));

/** Documents the TestRunConfig; values are checked by domain/run-config.ts, which names what is wrong. */
const RunConfigInput = Type.Object({
  osType: field("ANDROID or IOS (default: the framework's)"),
  frameworkId: field('From /me/available-frameworks; without it (and without devices) the project config is used'),
  projectId: field('An existing project'),
  projectName: field('A project name: found, or created'),
  deviceGroupId: field('The device group to run on'),
  deviceIds: field('Devices to run on (wins over deviceGroupId)'),
  files: field('[{id, action: INSTALL|RUN_TEST|COPY_TO_DEVICE}] or file ids'),
  testRunName: field('Name of the run (default "Test Run N")'),
  timeout: field('Seconds per device (at most your plan allows)'),
  testRunParameters: field('[{key, value}]: environment variables of the tests'),
  hookURL: field('URL that receives a POST when the run finishes'),
  maxAutoRetriesCount: field('Automatic retries of infrastructure failures, 0..5'),
  scheduler: field('PARALLEL, SERIAL or SINGLE'),
  deviceLanguageCode: field('Locale, e.g. en_US'),
  limitationType: field('PACKAGE or CLASS'),
  limitationValue: field('Package or class to limit the tests to'),
  instrumentationRunner: field('Android instrumentation runner'),
  withAnnotation: field('Run only tests with this annotation'),
  withoutAnnotation: field('Skip tests with this annotation'),
  applicationUsername: field('Crawler sign-in user name'),
  applicationPassword: field('Crawler sign-in password'),
  launchApp: field('true or false'),
  videoRecordingEnabled: field(
    'true or false: record a video of every device session (default: the project setting, else true)',
  ),
});

/** The IDE plug-in says who it is in a header (domain/clients.ts). */
const clientOf = (request: FastifyRequest) =>
  runClientOf({
    client: request.headers['x-devicecloud-client'] as string | undefined,
    userAgent: request.headers['user-agent'],
  });

async function runRequest(
  ctx: Context,
  user: User,
  input: Record<string, unknown>,
  http: FastifyRequest,
): Promise<RunRequest> {
  const parsed = parseRunRequest(input, clientOf(http));
  return isLegacyRequest(parsed) && parsed.projectId !== null
    ? legacyRunRequest(ctx, user, parsed.projectId, parsed)
    : parsed;
}

export const runStartRoutes: readonly RouteSpec[] = [
  ...['/runs', '/me/runs'].map((path) =>
    route({
      method: 'POST',
      path,
      summary: 'Start a test run from a TestRunConfig (JSON), or from a project config with only projectId',
      tags: TAGS,
      answers: { 201: ApiTestRun },
      input: RunConfigInput,
      handle: async ({ ctx, user, input, present, request }) =>
        created(presentTestRun(await startRun(ctx, user, await runRequest(ctx, user, input, request)), present)),
    }),
  ),
  ...['/runs/config', '/me/runs/config'].map((path) =>
    route({
      method: 'GET',
      path,
      summary: 'The TestRunConfig defaults: what a run gets for each field its config leaves out',
      tags: TAGS,
      answers: { 200: ApiTestRunPlan },
      handle: async ({ user, present }) => ok(presentRunConfigDefaults(PLAN_MAX_TIMEOUT_SECONDS[user.plan], present)),
    }),
  ),
  route({
    method: 'POST',
    path: '/me/runs/config',
    summary: 'Check a TestRunConfig without starting anything; answers it filled in',
    tags: TAGS,
    answers: { 200: ApiTestRunPlan },
    input: RunConfigInput,
    handle: async ({ ctx, user, input, present, request }) =>
      ok(presentRunPlan(await planRun(ctx, user, await runRequest(ctx, user, input, request)), present)),
  }),
  route({
    method: 'POST',
    path: '/me/projects/:projectId/runs',
    summary: "Start a run with the project's config (legacy); name, usedDeviceIds[] and config fields override it",
    tags: TAGS,
    answers: { 201: ApiTestRun },
    input: Type.Object({
      ...RunConfigInput.properties,
      name: field('Name of the run'),
      usedDeviceIds: Type.Optional(
        Type.Array(Type.Integer({ minimum: 1 }), { description: "Devices instead of the config's group" }),
      ),
    }),
    handle: async ({ ctx, user, params, input, present, request }) => {
      const parsed = parseRunRequest({ ...input, projectId: params.projectId }, clientOf(request));
      const legacy = await legacyRunRequest(ctx, user, params.projectId, parsed, {
        deviceIds: input.usedDeviceIds ?? null,
        testRunName: typeof input.name === 'string' && input.name.trim() !== '' ? input.name.trim() : null,
      });
      return created(presentTestRun(await startRun(ctx, user, legacy), present));
    },
  }),
];
