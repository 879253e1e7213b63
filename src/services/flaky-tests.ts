/** A project's flaky tests (docs/api.md#flaky-tests), for its owner only. */
import type { FlakyTest, FlakyTestField } from '../domain/flaky-tests.ts';
import type { ListQuery } from '../domain/list-query.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import { requireProject } from './projects.ts';

export async function listFlakyTests(
  ctx: Context,
  user: User,
  projectId: number,
  query: ListQuery<FlakyTestField>,
): Promise<{ total: number; items: FlakyTest[] }> {
  // A project shared with the user is read like its results (docs/api.md#sharing).
  const project = await requireProject(ctx, user, projectId, 'read');
  return ctx.store.flakyTests.list(project.id, query);
}
