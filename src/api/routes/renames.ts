/**
 * Renaming a test run (the Java client's `APITestRun.update()`) and a file
 * (docs/api.md#renaming-runs-and-files), each under every path of the record.
 */
import Type from 'typebox';
import { renameFile } from '../../services/files.ts';
import { updateRun } from '../../services/runs.ts';
import { ApiUserFile, presentFile } from '../present/file.ts';
import { ApiTestRun, presentTestRun } from '../present/test-run.ts';
import { type RouteSpec, ok, route } from '../route.ts';
import { Text } from '../schemas.ts';

const RUN_PATHS = ['/me/projects/:projectId/runs/:runId', '/me/runs/:runId', '/runs/:runId'] as const;
type RunPath = '/me/projects/:projectId/runs/:runId';

const RunChangeInput = Type.Object({
  displayName: Type.Optional(Text("The run's new name (empty: its default, Test Run {number})", 1000)),
  name: Type.Optional(Text('The same as displayName', 1000)),
});

const FileChangeInput = Type.Object({
  name: Type.Optional(Text("The file's new name, with the same extension", 1000)),
});

export const renameRoutes: readonly RouteSpec[] = [
  ...RUN_PATHS.map((path) =>
    route({
      method: 'POST',
      path: path as RunPath,
      summary: 'Rename a test run (displayName); answers the run',
      tags: ['Test runs'],
      answers: { 200: ApiTestRun },
      input: RunChangeInput,
      handle: async ({ ctx, user, params, input, present }) =>
        ok(presentTestRun(await updateRun(ctx, user, params.runId, params.projectId, input), present)),
    }),
  ),
  ...['/me/files/:fileId', '/files/:fileId'].map((path) =>
    route({
      method: 'POST',
      path: path as '/files/:fileId',
      summary: "Rename a file (name, keeping the file's extension); answers the file",
      tags: ['Files'],
      answers: { 200: ApiUserFile },
      input: FileChangeInput,
      handle: async ({ ctx, user, params, input, present }) =>
        ok(presentFile(await renameFile(ctx, user, params.fileId, input.name), present)),
    }),
  ),
];
