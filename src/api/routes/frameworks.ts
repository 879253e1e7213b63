/** The test frameworks a run may use. */
import { FRAMEWORKS } from '../../domain/frameworks.ts';
import { ApiFramework, presentFramework } from '../present/framework.ts';
import { listSchema, presentWholeList } from '../present/list.ts';
import { type RouteSpec, ok, route } from '../route.ts';

export const frameworkRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/available-frameworks',
    summary: 'Frameworks a run may use, per OS, with the files each needs',
    tags: ['Starting runs'],
    answers: { 200: listSchema(ApiFramework) },
    handle: async ({ listLinks }) => ok(presentWholeList(FRAMEWORKS.map(presentFramework), listLinks())),
  }),
];
