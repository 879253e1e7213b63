/**
 * The paths a device session (or legacy device run) and a run answer under, and how a handler
 * reads the session and its scope from them: shared by the results, result-zip and run-progress
 * routes so that each of their paths exists under every alias the clients use.
 */
import type { DeviceRunScope } from '../../services/runs.ts';

export const BASES = [
  '/me/device-sessions/:deviceSessionId',
  '/device-sessions/:deviceSessionId',
  '/me/projects/:projectId/runs/:runId/device-sessions/:deviceSessionId',
  '/me/projects/:projectId/runs/:runId/device-runs/:deviceRunId',
  '/me/runs/:runId/device-runs/:deviceRunId',
  '/runs/:runId/device-runs/:deviceRunId',
] as const;
/** The widest of BASES, for typing a route's params (every other base has a subset of them). */
export type Base = '/me/projects/:projectId/runs/:runId/device-sessions/:deviceSessionId';

export const RUN_PATHS = ['/me/projects/:projectId/runs/:runId', '/me/runs/:runId', '/runs/:runId'] as const;
export type RunPath = '/me/projects/:projectId/runs/:runId';

export interface SessionParams {
  readonly deviceSessionId?: number;
  readonly deviceRunId?: number;
  readonly projectId?: number;
  readonly runId?: number;
}

export const idOf = (params: SessionParams) => (params.deviceSessionId ?? params.deviceRunId)!;
export const scopeOf = (params: SessionParams): DeviceRunScope => ({
  projectId: params.projectId,
  runId: params.runId,
});
