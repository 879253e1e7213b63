/** The test frameworks a run may use. */
import { FRAMEWORKS } from '../../domain/frameworks.ts';
import { ApiFramework, presentFramework } from '../present/framework.ts';
import { itemList, listSchema } from '../present/list.ts';
import { type RouteSpec, route, whole } from '../route.ts';

export const frameworkRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/available-frameworks',
    summary: 'Frameworks a run may use, per OS, with the files each needs',
    tags: ['Starting runs'],
    answers: { 200: listSchema(ApiFramework) },
    list: itemList(ApiFramework, {
      entity: 'frameworks',
      sort: [{ field: 'id', direction: 'asc' }],
      search: ['name', 'description'],
      shownOnly: ['sampleApp', 'sampleTest'],
    }),
    handle: async () => whole(FRAMEWORKS.map(presentFramework)),
  }),
];
