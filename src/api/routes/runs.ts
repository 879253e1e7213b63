/**
 * Reading test runs and their device runs, in the legacy view (`device-runs`, runStatus) and the
 * modern one (`device-sessions`, state). Nested routes check that the ids belong together.
 */
import { parseListQuery } from '../../domain/list-query.ts';
import { DEVICE_RUN_LIST, RUN_LIST, legacyRunStatus } from '../../domain/runs.ts';
import { USER_DEVICE_SESSION_LIST, USER_RUN_LIST } from '../../domain/user-lists.ts';
import {
  deleteRun,
  deviceRunSteps,
  getDeviceRun,
  getRun,
  listDeviceRuns,
  listRuns,
  listUserDeviceSessions,
  listUserRuns,
} from '../../services/runs.ts';
import {
  ApiDeviceRun,
  ApiDeviceRunState,
  ApiDeviceSession,
  presentDeviceRun,
  presentDeviceSession,
  presentLegacyState,
} from '../present/device-run.ts';
import { listSchema, presentList, presentWholeList } from '../present/list.ts';
import { ApiTestRun, ApiTestRunConfig, presentRunConfig, presentTestRun } from '../present/test-run.ts';
import { type RouteSpec, noContent, ok, route } from '../route.ts';
import { ListInput, NoInput } from '../schemas.ts';

const TAGS = ['Test runs'];
const RUN = '/me/projects/:projectId/runs/:runId';
const DeviceRunList = listSchema(ApiDeviceRun);
const DeviceSessionList = listSchema(ApiDeviceSession);
const StateList = listSchema(ApiDeviceRunState);

export const runRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/runs',
    summary: "List the user's test runs in all their projects (newest first)",
    tags: TAGS,
    answers: { 200: listSchema(ApiTestRun) },
    input: ListInput,
    handle: async ({ ctx, user, input, present, listLinks }) => {
      const query = parseListQuery(input, USER_RUN_LIST);
      const page = await listUserRuns(ctx, user, query);
      return ok(
        presentList(
          page.items.map((view) => presentTestRun(view, present)),
          page.total,
          query,
          listLinks(),
        ),
      );
    },
  }),
  route({
    method: 'GET',
    path: '/me/device-sessions',
    summary: "List the user's current device sessions in all their runs (newest first; retried ones left out)",
    tags: TAGS,
    answers: { 200: DeviceSessionList },
    input: ListInput,
    handle: async ({ ctx, user, input, present, listLinks }) => {
      const query = parseListQuery(input, USER_DEVICE_SESSION_LIST);
      const page = await listUserDeviceSessions(ctx, user, query);
      return ok(
        presentList(
          page.items.map((view) => presentDeviceSession(view, present)),
          page.total,
          query,
          listLinks(),
        ),
      );
    },
  }),
  route({
    method: 'GET',
    path: '/me/projects/:projectId/runs',
    summary: 'List the test runs of a project',
    tags: TAGS,
    answers: { 200: listSchema(ApiTestRun) },
    input: ListInput,
    handle: async ({ ctx, user, params, input, present, listLinks }) => {
      const query = parseListQuery(input, RUN_LIST);
      const page = await listRuns(ctx, user, params.projectId, query);
      return ok(
        presentList(
          page.items.map((view) => presentTestRun(view, present)),
          page.total,
          query,
          listLinks(),
        ),
      );
    },
  }),
  ...[RUN, '/me/runs/:runId', '/runs/:runId'].flatMap((path) => [
    route({
      method: 'GET',
      path: path as typeof RUN,
      summary: 'Read a test run',
      tags: TAGS,
      answers: { 200: ApiTestRun },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentTestRun(await getRun(ctx, user, params.runId, params.projectId), present)),
    }),
    route({
      method: 'GET',
      path: `${path as typeof RUN}/config`,
      summary: 'The TestRunConfig the run was started with (its `config`)',
      tags: TAGS,
      answers: { 200: ApiTestRunConfig },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentRunConfig(await getRun(ctx, user, params.runId, params.projectId), present)),
    }),
    route({
      method: 'DELETE',
      path: path as typeof RUN,
      summary: 'Delete a test run with its results',
      tags: TAGS,
      answers: { 204: 'empty' },
      input: NoInput,
      handle: async ({ ctx, user, params }) => {
        await deleteRun(ctx, user, params.runId, params.projectId);
        return noContent();
      },
    }),
  ]),
  ...[RUN, '/me/runs/:runId', '/runs/:runId'].flatMap((path) => [
    route({
      method: 'GET',
      path: `${path as typeof RUN}/device-runs`,
      summary: 'List the device runs of a test run (legacy view)',
      tags: TAGS,
      answers: { 200: DeviceRunList },
      input: ListInput,
      handle: async ({ ctx, user, params, input, present, listLinks }) => {
        const query = parseListQuery(input, DEVICE_RUN_LIST);
        const page = await listDeviceRuns(ctx, user, params.runId, params.projectId, query);
        return ok(
          presentList(
            page.items.map((view) => presentDeviceRun(view, present)),
            page.total,
            query,
            listLinks(),
          ),
        );
      },
    }),
    route({
      method: 'GET',
      path: `${path as typeof RUN}/device-sessions`,
      summary: 'List the device sessions of a test run',
      tags: TAGS,
      answers: { 200: DeviceSessionList },
      input: ListInput,
      handle: async ({ ctx, user, params, input, present, listLinks }) => {
        const query = parseListQuery(input, DEVICE_RUN_LIST);
        const page = await listDeviceRuns(ctx, user, params.runId, params.projectId, query);
        return ok(
          presentList(
            page.items.map((view) => presentDeviceSession(view, present)),
            page.total,
            query,
            listLinks(),
          ),
        );
      },
    }),
    route({
      method: 'GET',
      path: `${path as typeof RUN}/device-runs/:deviceRunId`,
      summary: 'Read a device run (legacy view)',
      tags: TAGS,
      answers: { 200: ApiDeviceRun },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentDeviceRun(await getDeviceRun(ctx, user, params.deviceRunId, params), present)),
    }),
    route({
      method: 'GET',
      path: `${path as typeof RUN}/device-runs/:deviceRunId/states`,
      summary: 'The step timeline of a device run (legacy view)',
      tags: TAGS,
      answers: { 200: StateList },
      handle: async ({ ctx, user, params, listLinks }) => {
        const view = await getDeviceRun(ctx, user, params.deviceRunId, params);
        const steps = await deviceRunSteps(ctx, user, params.deviceRunId, params);
        const status = legacyRunStatus(view.deviceRun.state);
        return ok(
          presentWholeList(
            steps.map((step) => presentLegacyState(step, status)),
            listLinks(),
          ),
        );
      },
    }),
    route({
      method: 'GET',
      path: `${path as typeof RUN}/device-sessions/:deviceSessionId`,
      summary: 'Read a device session',
      tags: TAGS,
      answers: { 200: ApiDeviceSession },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentDeviceSession(await getDeviceRun(ctx, user, params.deviceSessionId, params), present)),
    }),
  ]),
  ...['/me/device-sessions/:deviceSessionId', '/device-sessions/:deviceSessionId'].flatMap((path) => [
    route({
      method: 'GET',
      path: path as '/device-sessions/:deviceSessionId',
      summary: 'Read a device session',
      tags: TAGS,
      answers: { 200: ApiDeviceSession },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentDeviceSession(await getDeviceRun(ctx, user, params.deviceSessionId), present)),
    }),
  ]),
];
