/** A project's flaky tests (docs/api.md#flaky-tests). */
import { FLAKY_TEST_LIST } from '../../domain/flaky-tests.ts';
import { listFlakyTests } from '../../services/flaky-tests.ts';
import { ApiFlakyTest, presentFlakyTest } from '../present/flaky-test.ts';
import { listSchema, storedList } from '../present/list.ts';
import { type RouteSpec, page, route } from '../route.ts';

export const flakyTestRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/me/projects/:projectId/flaky-tests',
    summary: 'Tests that both passed and failed on the same app build, with their history',
    tags: ['Results'],
    answers: { 200: listSchema(ApiFlakyTest) },
    list: storedList(FLAKY_TEST_LIST, ['selfURI']),
    handle: async ({ ctx, user, params, present, list }) => {
      const found = await listFlakyTests(ctx, user, params.projectId, list);
      return page(
        found.items.map((test) => presentFlakyTest(test, present)),
        found.total,
      );
    },
  }),
];
