/**
 * What the use cases hand to the presenters: an entity together with the related data its wire
 * shape shows (counters, names, embedded children), all loaded in a fixed number of statements.
 */
import type { Device } from '../domain/devices.ts';
import type { Project } from '../domain/projects.ts';
import type { DeviceRun } from '../domain/runs.ts';
import type { RunStats } from '../domain/run-stats.ts';
import type { StoredTestCase } from '../domain/test-cases.ts';
import type { ProjectFigures } from '../store/projects.ts';
import type { RunRecord } from '../store/test-runs.ts';
import type { QueueStatus } from './queue-status.ts';

export interface Page<T> {
  readonly total: number;
  readonly items: readonly T[];
}

export interface DeviceRunView {
  readonly deviceRun: DeviceRun;
  readonly device: Device;
  /** Names of its run and project, which a device session shows. */
  readonly testRunName: string;
  readonly projectName: string;
  /** The e-mail of the user whose session it is (who started its run), whoever reads it. */
  readonly userEmail: string;
  /** The id of its video among its output files, when it has one (docs/api.md#videos). */
  readonly videoFileId: number | null;
}

export interface RunView extends RunRecord {
  readonly stats: RunStats;
  readonly queue: QueueStatus;
  /** Present when the caller asked for the device runs too (the project listing). */
  readonly deviceRuns?: readonly DeviceRunView[];
}

export interface ProjectView {
  readonly project: Project;
  readonly figures: ProjectFigures;
  /** Present in the project listing: the newest runs, newest first. */
  readonly testRuns?: readonly RunView[];
}

/** A test case result, and whether the test is flaky on the session's build (docs/api.md#flaky-tests). */
export interface TestCaseRunView {
  readonly testCase: StoredTestCase;
  readonly flaky: boolean;
}
