/**
 * How far a run and its device sessions have come (docs/api.md#steps-and-data-availability): the
 * run's steps and which results its sessions have, a session's current step and its connections,
 * under every path a client may use for them.
 */
import { connectionsOf, currentStepOf, runDataAvailability, runStepsOf } from '../../services/run-progress.ts';
import { ApiDeviceSessionStep, presentStep } from '../present/device-run.ts';
import { itemList, listSchema } from '../present/list.ts';
import {
  ApiConnection,
  ApiTestRunDataAvailability,
  ApiTestRunStep,
  presentRunDataAvailability,
  presentRunStep,
} from '../present/run-progress.ts';
import { type RouteSpec, ok, route, whole } from '../route.ts';
import { BASES, type Base, RUN_PATHS, type RunPath, idOf, scopeOf } from './session-paths.ts';

const TAGS = ['Test runs'];
const RUN_STEPS = itemList(ApiTestRunStep, { entity: 'steps', sort: [], search: ['type'] });
const CONNECTIONS = itemList(ApiConnection, { entity: 'connections', sort: [], search: ['type', 'host'] });

const runLevel = RUN_PATHS.flatMap((base) => {
  const path = base as RunPath;
  return [
    route({
      method: 'GET',
      path: `${path}/steps`,
      summary: "The run's steps, summed up from its current device sessions' step timelines",
      tags: TAGS,
      answers: { 200: listSchema(ApiTestRunStep) },
      list: RUN_STEPS,
      handle: async ({ ctx, user, params }) => {
        const view = await runStepsOf(ctx, user, params.runId, params.projectId);
        return whole(view.steps.map((step) => presentRunStep(view.runId, step)));
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
      list: CONNECTIONS,
      handle: async ({ ctx, user, params }) => whole(await connectionsOf(ctx, user, idOf(params), scopeOf(params))),
    }),
  ];
});

export const runProgressRoutes: readonly RouteSpec[] = [...runLevel, ...sessionLevel];
