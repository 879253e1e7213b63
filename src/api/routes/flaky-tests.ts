/** A project's flaky tests (docs/api.md#flaky-tests). */
import { FLAKY_TEST_LIST } from '../../domain/flaky-tests.ts';
import { parseListQuery } from '../../domain/list-query.ts';
import { listFlakyTests } from '../../services/flaky-tests.ts';
import { ApiFlakyTest, presentFlakyTest } from '../present/flaky-test.ts';
import { listSchema, presentList } from '../present/list.ts';
import { type RouteSpec, ok, route } from '../route.ts';
import { ListInput } from '../schemas.ts';

export const flakyTestRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/projects/:projectId/flaky-tests',
    summary: 'Tests that both passed and failed on the same app build, with their history',
    tags: ['Results'],
    answers: { 200: listSchema(ApiFlakyTest) },
    input: ListInput,
    handle: async ({ ctx, user, params, input, present, listLinks }) => {
      const query = parseListQuery(input, FLAKY_TEST_LIST);
      const page = await listFlakyTests(ctx, user, params.projectId, query);
      return ok(
        presentList(
          page.items.map((test) => presentFlakyTest(test, present)),
          page.total,
          query,
          listLinks(),
        ),
      );
    },
  }),
];
