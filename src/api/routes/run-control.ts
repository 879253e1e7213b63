/** Abort and retry, of whole runs and of single device sessions. */
import Type from 'typebox';
import { abortDeviceSession, abortRun, retryDeviceSession, retryRun } from '../../services/run-control.ts';
import { getDeviceRun } from '../../services/runs.ts';
import { ApiDeviceRun, ApiDeviceSession, presentDeviceRun, presentDeviceSession } from '../present/device-run.ts';
import { ApiTestRun, presentTestRun } from '../present/test-run.ts';
import { type RouteSpec, ok, route } from '../route.ts';
import { NoInput } from '../schemas.ts';

const TAGS = ['Test runs'];
const RUN_PATHS = ['/me/projects/:projectId/runs/:runId', '/me/runs/:runId', '/runs/:runId'] as const;
type RunPath = '/me/projects/:projectId/runs/:runId';

const SESSION_PATHS = [
  '/me/device-sessions/:deviceSessionId',
  '/device-sessions/:deviceSessionId',
  '/me/projects/:projectId/runs/:runId/device-sessions/:deviceSessionId',
] as const;
type SessionPath = '/me/projects/:projectId/runs/:runId/device-sessions/:deviceSessionId';
const DEVICE_RUN_PATH = '/me/projects/:projectId/runs/:runId/device-runs/:deviceRunId';
const SESSION_ACTIONS = [
  ['abort', 'Abort one device session', abortDeviceSession],
  ['retry', 'Retry one device session (a running one is interrupted); answers the new session', retryDeviceSession],
] as const;

export const runControlRoutes: readonly RouteSpec[] = [
  ...RUN_PATHS.flatMap((path) => [
    route({
      method: 'POST',
      path: `${path as RunPath}/abort`,
      summary: 'Abort a run: unfinished device runs end as ABORTED',
      tags: TAGS,
      answers: { 200: ApiTestRun },
      input: NoInput,
      handle: async ({ ctx, user, params, present }) =>
        ok(presentTestRun(await abortRun(ctx, user, params.runId, params.projectId), present)),
    }),
    route({
      method: 'POST',
      path: `${path as RunPath}/retry`,
      summary: 'Retry the named device runs, or the whole run, as new device sessions',
      tags: TAGS,
      answers: { 200: ApiTestRun },
      input: Type.Object({ deviceRunIds: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 })) }),
      handle: async ({ ctx, user, params, input, present }) =>
        ok(presentTestRun(await retryRun(ctx, user, params.runId, params.projectId, input.deviceRunIds), present)),
    }),
  ]),
  ...SESSION_PATHS.flatMap((path) =>
    SESSION_ACTIONS.map(([action, summary, act]) =>
      route({
        method: 'POST',
        path: `${path as SessionPath}/${action}`,
        summary,
        tags: TAGS,
        answers: { 200: ApiDeviceSession },
        input: NoInput,
        handle: async ({ ctx, user, params, present }) => {
          const deviceRun = await act(ctx, user, params.deviceSessionId, params);
          return ok(presentDeviceSession(await getDeviceRun(ctx, user, deviceRun.id), present));
        },
      }),
    ),
  ),
  route({
    method: 'POST',
    path: `${DEVICE_RUN_PATH}/abort`,
    summary: 'Abort one device run (legacy view)',
    tags: TAGS,
    answers: { 200: ApiDeviceRun },
    input: NoInput,
    handle: async ({ ctx, user, params, present }) => {
      const deviceRun = await abortDeviceSession(ctx, user, params.deviceRunId, params);
      return ok(presentDeviceRun(await getDeviceRun(ctx, user, deviceRun.id), present));
    },
  }),
];
