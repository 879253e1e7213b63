/**
 * A test run's row read into the domain's TestRun: the columns as they are, the settings and the
 * final tallies parsed (and kept between reads, store/parsed-rows.ts: a run's settings never change
 * once stored, nor its final tallies once written).
 */
import { type RunSettings, readRunSettings } from '../domain/run-settings.ts';
import type { StateTally } from '../domain/run-stats.ts';
import type { OsType } from '../domain/projects.ts';
import type { TestRun, TestRunState } from '../domain/runs.ts';
import { type ParsedRows, parsedRows } from './parsed-rows.ts';
import type { RunRecord } from './test-runs.ts';

/** Readers of one store's rows, each with its own parsed values. */
export function runRowReaders() {
  const parsed: ParsedColumns = {
    settings: parsedRows((json, id) => readRunSettings(json, `The settings of test run ${id}`).settings),
    tallies: parsedRows((json) => JSON.parse(json) as StateTally[]),
  };
  return {
    toRun: (row: RunRow) => runOf(row, parsed),
    toRecord: (row: RecordRow) => recordOf(row, parsed),
  };
}

export interface RunRow {
  id: number;
  project_id: number;
  user_id: number;
  number: number;
  name: string | null;
  state: string;
  os_type: string;
  create_time: number;
  start_time: number | null;
  end_time: number | null;
  config_json: string;
  framework_id: number | null;
  started_by_id: number;
  final_tallies_json: string | null;
}

interface ParsedColumns {
  readonly settings: ParsedRows<RunSettings>;
  readonly tallies: ParsedRows<StateTally[]>;
}

type RecordRow = RunRow & { project_name: string; started_by_email: string };

function runOf(row: RunRow, parsed: ParsedColumns): TestRun {
  return {
    id: row.id,
    projectId: row.project_id,
    userId: row.user_id,
    number: row.number,
    name: row.name,
    state: row.state as TestRunState,
    osType: row.os_type as OsType,
    createTime: row.create_time,
    startTime: row.start_time,
    endTime: row.end_time,
    config: parsed.settings(row.id, row.config_json),
    frameworkId: row.framework_id,
    startedById: row.started_by_id,
    finalTallies: row.final_tallies_json === null ? null : parsed.tallies(row.id, row.final_tallies_json),
  };
}

function recordOf(row: RecordRow, parsed: ParsedColumns): RunRecord {
  return { run: runOf(row, parsed), projectName: row.project_name, startedByEmail: row.started_by_email };
}
