/** The legacy project config (docs/api.md#project-config) and its key/value parameters. */
import Type from 'typebox';
import type { RawConfigChange } from '../../domain/project-config.ts';
import {
  addConfigParameter,
  deleteConfigParameter,
  getProjectConfig,
  listConfigParameters,
  updateProjectConfig,
} from '../../services/project-config.ts';
import { itemList, listSchema } from '../present/list.ts';
import {
  ApiProjectConfig,
  ApiTestRunParameter,
  presentConfigParameter,
  presentProjectConfig,
} from '../present/project-config.ts';
import { type RouteSpec, created, noContent, ok, route, whole } from '../route.ts';
import { NoInput, Scalar, Text } from '../schemas.ts';

const TAGS = ['Project config'];
const ParameterList = listSchema(ApiTestRunParameter);

const ConfigInput = Type.Object({
  mode: Type.Optional(
    Scalar('FULL_RUN, IOS, APP_CRAWLER, IOS_CRAWLER (IOS projects only), UIAUTOMATOR, CALABASH, ...'),
  ),
  usedDeviceGroupId: Type.Optional(Scalar('Device group the runs use (required to start a run from the config)')),
  scheduler: Type.Optional(Scalar('PARALLEL, SERIAL or SINGLE')),
  timeout: Type.Optional(Scalar('Test timeout in seconds')),
  deviceLanguageCode: Type.Optional(Scalar('Locale, e.g. en_US')),
  hookURL: Type.Optional(Scalar('URL that receives a POST when a run finishes')),
  instrumentationRunner: Type.Optional(Scalar('Android instrumentation runner class')),
  limitationType: Type.Optional(Scalar('PACKAGE or CLASS')),
  limitationValue: Type.Optional(Scalar('Package or class the tests are limited to')),
  withAnnotation: Type.Optional(Scalar('Run only tests with this annotation')),
  withoutAnnotation: Type.Optional(Scalar('Skip tests with this annotation')),
  applicationUsername: Type.Optional(Scalar('Crawler sign-in user name')),
  applicationPassword: Type.Optional(Scalar('Crawler sign-in password')),
  autoScreenshots: Type.Optional(Scalar('true or false')),
  screenshotDir: Type.Optional(Scalar('Where tests write screenshots on the device')),
  launchApp: Type.Optional(Scalar('true or false')),
  videoRecordingEnabled: Type.Optional(Scalar('true or false')),
  maxAutoRetriesCount: Type.Optional(Scalar('Automatic retries of infrastructure failures, 0..5')),
});

const CONFIG_PATHS = ['/projects/:projectId/config', '/me/projects/:projectId/config'] as const;

export const projectConfigRoutes: readonly RouteSpec[] = CONFIG_PATHS.flatMap((path) => [
  route({
    method: 'GET',
    path: path as '/projects/:projectId/config',
    summary: 'Read the project config',
    tags: TAGS,
    answers: { 200: ApiProjectConfig },
    handle: async ({ ctx, user, params, present }) =>
      ok(presentProjectConfig(await getProjectConfig(ctx, user, params.projectId), present)),
  }),
  route({
    method: 'POST',
    path: path as '/projects/:projectId/config',
    summary: 'Change the project config; answers the whole updated config',
    tags: TAGS,
    answers: { 201: ApiProjectConfig },
    input: ConfigInput,
    handle: async ({ ctx, user, params, input, present }) =>
      created(
        presentProjectConfig(await updateProjectConfig(ctx, user, params.projectId, input as RawConfigChange), present),
      ),
  }),
  route({
    method: 'GET',
    path: `${path as '/projects/:projectId/config'}/parameters`,
    summary: 'List the config parameters (handed to tests as environment variables)',
    tags: TAGS,
    answers: { 200: ParameterList },
    list: itemList(ApiTestRunParameter, { entity: 'config parameters', sort: [], search: ['key', 'value'] }),
    handle: async ({ ctx, user, params, present }) => {
      const parameters = await listConfigParameters(ctx, user, params.projectId);
      return whole(parameters.map((parameter) => presentConfigParameter(parameter, present)));
    },
  }),
  route({
    method: 'POST',
    path: `${path as '/projects/:projectId/config'}/parameters`,
    summary: 'Add a config parameter',
    tags: TAGS,
    answers: { 201: ApiTestRunParameter },
    input: Type.Object({
      key: Type.Optional(Text('Environment variable name', 200)),
      value: Type.Optional(Text('Value', 5000)),
    }),
    handle: async ({ ctx, user, params, input, present }) =>
      created(presentConfigParameter(await addConfigParameter(ctx, user, params.projectId, input), present)),
  }),
  route({
    method: 'DELETE',
    path: `${path as '/projects/:projectId/config'}/parameters/:parameterId`,
    summary: 'Delete a config parameter',
    tags: TAGS,
    answers: { 204: 'empty' },
    input: NoInput,
    handle: async ({ ctx, user, params }) => {
      await deleteConfigParameter(ctx, user, params.projectId, params.parameterId);
      return noContent();
    },
  }),
]);
