import type { ProjectView } from '../../services/views.ts';
import { type PresentContext, userPath } from './context.ts';
import { type Rep, rep } from './representation.ts';
import { presentTestRun } from './test-run.ts';

export function presentProject(view: ProjectView, context: PresentContext): Rep {
  const { project, figures } = view;
  const fields: Record<string, Rep[keyof Rep]> = {
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
    shared: project.shared,
    readOnly: project.readOnly,
    successRatio: figures.successRatio,
    userId: project.userId,
    userEmail: context.user?.email ?? null,
    testRunCount: figures.testRunCount,
  };
  if (view.testRuns !== undefined) fields.testRuns = view.testRuns.map((run) => presentTestRun(run, context));
  return rep('apiProject', fields);
}
