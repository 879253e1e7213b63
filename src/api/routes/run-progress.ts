/**
 * How far a run and its device sessions have come (docs/api.md#steps-and-data-availability): the
 * run's steps and which results its sessions have, a session's current step and its connections,
 * under every path a client may use for them.
 */
import { connectionsOf, currentStepOf, runDataAvailability, runStepsOf } from '../../services/run-progress.ts';
import type { DeviceRunScope } from '../../services/runs.ts';
import { ApiDeviceSessionStep, presentStep } from '../present/device-run.ts';
import { listSchema, presentWholeList } from '../present/list.ts';
import {
  ApiConnection,
  ApiTestRunDataAvailability,
  ApiTestRunStep,
  presentRunDataAvailability,
  presentRunStep,
} from '../present/run-progress.ts';
import { type RouteSpec, ok, route } from '../route.ts';
import { BASES } from './results.ts';

const TAGS = ['Test runs'];
const RUN_PATHS = ['/me/projects/:projectId/runs/:runId', '/me/runs/:runId', '/runs/:runId'] as const;
type RunPath = '/me/projects/:projectId/runs/:runId';
type Base = '/me/projects/:projectId/runs/:runId/device-sessions/:deviceSessionId';

interface SessionParams {
  readonly deviceSessionId?: number;
  readonly deviceRunId?: number;
  readonly projectId?: number;
  readonly runId?: number;
}

const idOf = (params: SessionParams) => (params.deviceSessionId ?? params.deviceRunId)!;
const scopeOf = (params: SessionParams): DeviceRunScope => ({ projectId: params.projectId, runId: params.runId });

const runLevel = RUN_PATHS.flatMap((base) => {
  const path = base as RunPath;
  return [
    route({
      method: 'GET',
      path: `${path}/steps`,
      summary: "The run's steps, summed up from its current device sessions' step timelines",
      tags: TAGS,
      answers: { 200: listSchema(ApiTestRunStep) },
      handle: async ({ ctx, user, params, listLinks }) => {
        const view = await runStepsOf(ctx, user, params.runId, params.projectId);
        return ok(
          presentWholeList(
            view.steps.map((step) => presentRunStep(view.runId, step)),
            listLinks(),
          ),
        );
      },
    }),
    route({
      method: 'GET',
      path: `${path}/data-availability`,
      summary: 'Which results (logs, screenshots, performance, video) each current device session of the run has',
      tags: TAGS,
      answers: { 200: ApiTestRunDataAvailability },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentRunDataAvailability(await runDataAvailability(ctx, user, params.runId, params.projectId), present)),
    }),
  ];
});

const sessionLevel = BASES.flatMap((base) => {
  const path = base as Base;
  return [
    route({
      method: 'GET',
      path: `${path}/steps/current`,
      summary: 'The step the device session is in (once it has ended: the last it was in)',
      tags: TAGS,
      answers: { 200: ApiDeviceSessionStep },
      handle: async ({ ctx, user, params }) =>
        ok(presentStep(await currentStepOf(ctx, user, idOf(params), scopeOf(params)))),
    }),
    route({
      method: 'GET',
      path: `${path}/connections`,
      summary: 'Connections open to the device session (none: sessions are automatic runs here)',
      tags: TAGS,
      answers: { 200: listSchema(ApiConnection) },
      handle: async ({ ctx, user, params, listLinks }) =>
        ok(presentWholeList(await connectionsOf(ctx, user, idOf(params), scopeOf(params)), listLinks())),
    }),
  ];
});

export const runProgressRoutes: readonly RouteSpec[] = [...runLevel, ...sessionLevel];
