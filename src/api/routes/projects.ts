/** Projects: create, list (with embedded runs), read, update, delete. */
import Type from 'typebox';
import { PROJECT_LIST } from '../../domain/projects.ts';
import {
  createProject,
  deleteProject,
  getProject,
  listProjects,
  parseEmbedRuns,
  unarchiveProject,
  updateProject,
} from '../../services/projects.ts';
import { listSchema, storedList } from '../present/list.ts';
import { ApiProject, presentProject } from '../present/project.ts';
import { type RouteSpec, created, noContent, ok, page, route } from '../route.ts';
import { NoInput, Text } from '../schemas.ts';

const TAGS = ['Projects'];

const ProjectInput = Type.Object({
  name: Type.Optional(Text('Project name (empty: a generated one)', 1000)),
  description: Type.Optional(Text('Description')),
  type: Type.Optional(Text('Legacy project type, e.g. ANDROID, IOS, GENERIC (default ANDROID)', 100)),
});

const ProjectChangeInput = Type.Object({
  name: Type.Optional(Text('New name', 1000)),
  description: Type.Optional(Text('New description')),
  archivingStrategy: Type.Optional(Text('NEVER, DAYS or RUNS', 100)),
  archivingItemCount: Type.Optional(Text('Days or runs to keep', 20)),
});

export const projectRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/projects',
    summary: 'List projects, each with its newest test runs and their device runs',
    tags: TAGS,
    answers: { 200: listSchema(ApiProject) },
    input: Type.Object({
      embedRuns: Type.Optional(
        Type.String({ maxLength: 10, description: 'Runs embedded per project, 0..100 (default 10)' }),
      ),
    }),
    list: storedList(PROJECT_LIST, ['selfURI']),
    handle: async ({ ctx, user, input, present, list }) => {
      const found = await listProjects(ctx, user, list, parseEmbedRuns(input.embedRuns));
      const extra = input.embedRuns === undefined ? undefined : { embedRuns: String(input.embedRuns) };
      return page(
        found.items.map((view) => presentProject(view, present)),
        found.total,
        extra,
      );
    },
  }),
  route({
    method: 'POST',
    path: '/me/projects',
    summary: 'Create a project',
    tags: TAGS,
    answers: { 201: ApiProject },
    input: ProjectInput,
    handle: async ({ ctx, user, input, present }) =>
      created(presentProject(await createProject(ctx, user, input), present)),
  }),
  route({
    method: 'POST',
    path: '/me/projects/:projectId/unarchive',
    summary: 'Take a project out of the archive (archiveTime becomes null)',
    tags: TAGS,
    answers: { 200: ApiProject },
    input: NoInput,
    handle: async ({ ctx, user, params, present }) =>
      ok(presentProject(await unarchiveProject(ctx, user, params.projectId), present)),
  }),
  ...['/me/projects/:projectId', '/projects/:projectId'].flatMap((path) => [
    route({
      method: 'GET',
      path: path as '/projects/:projectId',
      summary: 'Read a project',
      tags: TAGS,
      answers: { 200: ApiProject },
      handle: async ({ ctx, user, params, present }) =>
        ok(presentProject(await getProject(ctx, user, params.projectId), present)),
    }),
    route({
      method: 'POST',
      path: path as '/projects/:projectId',
      summary: 'Update a project',
      tags: TAGS,
      answers: { 200: ApiProject },
      input: ProjectChangeInput,
      handle: async ({ ctx, user, params, input, present }) =>
        ok(presentProject(await updateProject(ctx, user, params.projectId, input), present)),
    }),
    route({
      method: 'DELETE',
      path: path as '/projects/:projectId',
      summary: 'Delete a project with its runs, results and files',
      tags: TAGS,
      answers: { 204: 'empty' },
      input: NoInput,
      handle: async ({ ctx, user, params }) => {
        await deleteProject(ctx, user, params.projectId);
        return noContent();
      },
    }),
  ]),
];
