import type { ProjectView } from '../../services/views.ts';
import { type PresentContext, userPath } from './context.ts';
import Type, { type Static } from 'typebox';
import { Bool, Count, Id, MaybeStr, MaybeTime, Ratio, RowIndex, SelfURI, Str, Time } from './fields.ts';
import { SharingFields, sharingOf } from './sharing.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';
import { ApiTestRun, presentTestRun } from './test-run.ts';

export const ApiProject = entitySchema('apiProject', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  description: MaybeStr,
  type: Str,
  osType: Str,
  createTime: Time,
  archiveTime: MaybeTime,
  archivingStrategy: Str,
  archivingItemCount: Count,
  common: Bool,
  ...SharingFields,
  readOnly: Bool,
  successRatio: Ratio,
  userId: Id,
  userEmail: MaybeStr,
  rowIndex: RowIndex,
  testRunCount: Count,
  testRuns: Type.Optional(
    Type.Array(Nested(ApiTestRun), { description: 'Only in the listing: the newest runs (embedRuns)' }),
  ),
});

export function presentProject(view: ProjectView, context: PresentContext): Rep {
  const { project, figures } = view;
  const fields: Static<typeof ApiProject> = {
    id: project.id,
    selfURI: `${userPath(context)}/projects/${project.id}`,
    name: project.name,
    description: project.description,
    type: project.type,
    osType: project.osType,
    createTime: project.createTime,
    archiveTime: project.archiveTime,
    archivingStrategy: project.archivingStrategy,
    archivingItemCount: project.archivingItemCount,
    common: project.common,
    ...sharingOf(project.userId, context, project.shared, project.ownerEmail ?? null),
    readOnly: project.readOnly,
    successRatio: figures.successRatio,
    userId: project.userId,
    userEmail: project.ownerEmail ?? context.user?.email ?? null,
    rowIndex: null,
    testRunCount: figures.testRunCount,
  };
  if (view.testRuns !== undefined) fields.testRuns = view.testRuns.map((run) => presentTestRun(run, context));
  return entity(ApiProject, fields);
}
