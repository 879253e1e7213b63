/**
 * Reading test runs and their device runs, in the legacy view (`device-runs`, runStatus) and the
 * modern one (`device-sessions`, state). Nested routes check that the ids belong together.
 */
import { legacyRunStatus } from '../../domain/runs.ts';
import {
  PROJECT_RUN_LIST,
  RUN_DEVICE_RUN_LIST,
  RUN_DEVICE_SESSION_LIST,
  USER_DEVICE_SESSION_LIST,
  USER_RUN_LIST,
} from '../../domain/user-lists.ts';
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
import { itemList, listSchema, storedList } from '../present/list.ts';
import { ApiTestRun, ApiTestRunConfig, presentRunConfig, presentTestRun } from '../present/test-run.ts';
import { type RouteSpec, noContent, ok, page, route, whole } from '../route.ts';
import { NoInput } from '../schemas.ts';

const TAGS = ['Test runs'];
const RUN = '/me/projects/:projectId/runs/:runId';
const DeviceRunList = listSchema(ApiDeviceRun);
const DeviceSessionList = listSchema(ApiDeviceSession);
const StateList = listSchema(ApiDeviceRunState);

/**
 * What the run and session lists show but cannot filter on (docs/api.md#lists): links, and a run's
 * place in the live queue, which the scheduler works out rather than the runs table holding it.
 */
const RUN_SHOWN_ONLY = ['selfURI', 'uiLink', 'message'];
const SESSION_SHOWN_ONLY = ['selfURI', 'uiLink', 'video'];
const LEGACY_SHOWN_ONLY = ['selfURI'];

export const runRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/runs',
    summary: "List the user's test runs in all their projects (newest first)",
    tags: TAGS,
    answers: { 200: listSchema(ApiTestRun) },
    list: storedList(USER_RUN_LIST, RUN_SHOWN_ONLY),
    handle: async ({ ctx, user, present, list }) => {
      const found = await listUserRuns(ctx, user, list);
      return page(
        found.items.map((view) => presentTestRun(view, present)),
        found.total,
      );
    },
  }),
  route({
    method: 'GET',
    path: '/me/device-sessions',
    summary: "List the user's current device sessions in all their runs (newest first; retried ones left out)",
    tags: TAGS,
    answers: { 200: DeviceSessionList },
    list: storedList(USER_DEVICE_SESSION_LIST, SESSION_SHOWN_ONLY),
    handle: async ({ ctx, user, present, list }) => {
      const found = await listUserDeviceSessions(ctx, user, list);
      return page(
        found.items.map((view) => presentDeviceSession(view, present)),
        found.total,
      );
    },
  }),
  route({
    method: 'GET',
    path: '/me/projects/:projectId/runs',
    summary: 'List the test runs of a project',
    tags: TAGS,
    answers: { 200: listSchema(ApiTestRun) },
    list: storedList(PROJECT_RUN_LIST, RUN_SHOWN_ONLY),
    handle: async ({ ctx, user, params, present, list }) => {
      const found = await listRuns(ctx, user, params.projectId, list);
      return page(
        found.items.map((view) => presentTestRun(view, present)),
        found.total,
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
      list: storedList(RUN_DEVICE_RUN_LIST, LEGACY_SHOWN_ONLY),
      handle: async ({ ctx, user, params, present, list }) => {
        const found = await listDeviceRuns(ctx, user, params.runId, params.projectId, list);
        return page(
          found.items.map((view) => presentDeviceRun(view, present)),
          found.total,
        );
      },
    }),
    route({
      method: 'GET',
      path: `${path as typeof RUN}/device-sessions`,
      summary: 'List the device sessions of a test run',
      tags: TAGS,
      answers: { 200: DeviceSessionList },
      list: storedList(RUN_DEVICE_SESSION_LIST, SESSION_SHOWN_ONLY),
      handle: async ({ ctx, user, params, present, list }) => {
        const found = await listDeviceRuns(ctx, user, params.runId, params.projectId, list);
        return page(
          found.items.map((view) => presentDeviceSession(view, present)),
          found.total,
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
      list: itemList(ApiDeviceRunState, { entity: 'device run states', sort: [], search: [] }),
      handle: async ({ ctx, user, params }) => {
        const view = await getDeviceRun(ctx, user, params.deviceRunId, params);
        const steps = await deviceRunSteps(ctx, user, params.deviceRunId, params);
        const status = legacyRunStatus(view.deviceRun.state);
        return whole(steps.map((step) => presentLegacyState(step, status)));
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
