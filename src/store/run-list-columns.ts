/**
 * The list grammar's fields of runs and device runs as SQL (docs/api.md#lists): columns, and the
 * counters and names the records show, computed per listed row. Every subquery is keyed by the
 * listed run or device run, so it never reaches another run's rows.
 */
import { FRAMEWORKS } from '../domain/frameworks.ts';
import { DEVICE_RUN_STATES, FINAL_DEVICE_RUN_STATES, legacyRunStatus } from '../domain/runs.ts';
import type { DeviceRunListField, RunCountField, USER_RUN_LIST } from '../domain/user-lists.ts';
import { sql } from 'kysely';
import { currentDeviceRunText } from './current-device-runs.ts';
import type { ListSql } from './sql.ts';

type RunField = 'id' | 'number' | 'displayName' | 'state' | 'createTime' | 'startTime' | 'endTime';
/** The fields of the list across a user's runs: the domain's list spec says which. */
export type UserRunField = keyof (typeof USER_RUN_LIST)['fields'];

/** Counters as the presenter derives them (domain/runs.ts runStats): over the run's current device runs. */
const currentDeviceRuns = (what: string) =>
  `(SELECT ${what} FROM device_runs x WHERE x.test_run_id = tr.id AND ${currentDeviceRunText('x')})`;
const ratioOf = (states: readonly string[]) =>
  currentDeviceRuns(
    `COALESCE(SUM(CASE WHEN x.state IN (${states.map((state) => `'${state}'`).join(', ')}) THEN 1 ELSE 0 END) * 1.0 / NULLIF(COUNT(*), 0), 0)`,
  );
/** How many current device runs are in one of `states`. */
const inStates = (states: Iterable<string>) =>
  currentDeviceRuns(
    `COALESCE(SUM(CASE WHEN x.state IN (${[...states].map((state) => `'${state}'`).join(', ')}) THEN 1 ELSE 0 END), 0)`,
  );
const testCases = (column: string) => currentDeviceRuns(`COALESCE(SUM(${column}), 0)`);

/** The counters runStats (domain/runs.ts) adds up from the same device runs. */
const COUNT_COLUMNS: Record<RunCountField, string> = {
  waitingDeviceCount: inStates(['WAITING']),
  runningDeviceCount: inStates(['RUNNING', 'FINISHING']),
  finishedDeviceCount: inStates(FINAL_DEVICE_RUN_STATES),
  succeededDeviceCount: inStates(['SUCCEEDED']),
  failedDeviceCount: inStates(['FAILED']),
  warningDeviceCount: inStates(['WARNING']),
  errorsDeviceCount: inStates(['WARNING', 'TIMEOUT']),
  excludedDeviceCount: inStates(['EXCLUDED']),
  abortedDeviceCount: inStates(['ABORTED']),
  timeoutedDeviceCount: inStates(['TIMEOUT']),
  totalDeviceCount: currentDeviceRuns('COUNT(*)'),
  testCaseCount: testCases('x.test_case_all_count'),
  executedTestCaseCount: testCases('x.test_case_passed_count + x.test_case_failed_count'),
  successfulTestCaseCount: testCases('x.test_case_passed_count'),
  failedTestCaseCount: testCases('x.test_case_failed_count'),
};

/** The framework's name is code, not data: a CASE over the table, so it sorts and filters like a column. */
const FRAMEWORK_NAME = `CASE tr.framework_id ${FRAMEWORKS.map(
  (framework) => `WHEN ${framework.id} THEN '${framework.name.replace(/'/g, "''")}'`,
).join(' ')} END`;

const LIST_SQL: ListSql<RunField> = {
  columns: {
    id: 'tr.id',
    number: 'tr.number',
    // The default display name is derived, so filters and sorting use the same expression.
    displayName: `COALESCE(tr.name, 'Test Run ' || tr.number)`,
    state: 'tr.state',
    createTime: 'tr.create_time',
    startTime: 'tr.start_time',
    endTime: 'tr.end_time',
  },
  searchColumns: [`COALESCE(tr.name, 'Test Run ' || tr.number)`],
  tieBreaker: 'tr.id',
};

/**
 * A waiting run's place in the queue as services/queue-status.ts shows it: over the run's waiting
 * device runs, the fewest device runs ahead of one on its device (store/queue.ts standings counts
 * them the same way: higher priority, or older), plus one. Null when none of its device runs waits.
 */
const QUEUE_POSITION = `(SELECT MIN(1 + (SELECT COUNT(*) FROM device_runs o WHERE o.device_id = w.device_id
  AND o.state = 'WAITING' AND (o.priority > w.priority OR (o.priority = w.priority AND (o.create_time < w.create_time
  OR (o.create_time = w.create_time AND o.id < w.id)))))) FROM device_runs w WHERE w.test_run_id = tr.id AND w.state = 'WAITING')`;

/** Across projects (`/me/runs`): also which project, and its name among what the search looks in. */
export const USER_LIST_SQL: ListSql<UserRunField> = {
  columns: {
    ...LIST_SQL.columns,
    projectId: 'tr.project_id',
    projectName: 'p.name',
    frameworkId: 'tr.framework_id',
    frameworkName: FRAMEWORK_NAME,
    osType: 'tr.os_type',
    startedById: 'tr.started_by_id',
    userId: 'tr.user_id',
    deviceCount: currentDeviceRuns('COUNT(*)'),
    executionRatio: ratioOf([...FINAL_DEVICE_RUN_STATES]),
    successRatio: ratioOf(['SUCCEEDED']),
    ...COUNT_COLUMNS,
    startedByDisplayName: 'u.email',
    // Constants as the presenter shows them: nothing is billed, result zips are made on request. A
    // bare 0 would be a column position in ORDER BY.
    billable: 'CAST(0 AS INTEGER)',
    logsFileId: 'CAST(NULL AS BIGINT)',
    screenshotsFileId: 'CAST(NULL AS BIGINT)',
    queuePosition: QUEUE_POSITION,
  },
  searchColumns: [...LIST_SQL.searchColumns, 'p.name'],
  tieBreaker: LIST_SQL.tieBreaker,
};

/** One project's runs: the same fields (docs/api.md#lists), the search in the runs' names only. */
export const PROJECT_LIST_SQL: ListSql<UserRunField> = { ...USER_LIST_SQL, searchColumns: LIST_SQL.searchColumns };

/** The legacy view's status is code, not data: a CASE over the states, so it filters like a column. */
const LEGACY_STATUS = `CASE dr.state ${DEVICE_RUN_STATES.map((state) => `WHEN '${state}' THEN '${legacyRunStatus(state)}'`).join(' ')} END`;

/**
 * The fields of a list of device runs (the domain's list specs say which): the device is joined for
 * its name, which the search looks in. Durations run until `now` while a session runs, as shown.
 */
export function deviceRunListSql(now: number): ListSql<DeviceRunListField> {
  const duration = sql`(CASE WHEN dr.start_time IS NULL THEN 0 ELSE COALESCE(dr.end_time, ${now}) - dr.start_time END)`;
  return {
    columns: {
      id: 'dr.id',
      state: 'dr.state',
      createTime: 'dr.create_time',
      startTime: 'dr.start_time',
      endTime: 'dr.end_time',
      deviceId: 'dr.device_id',
      excludeReason: 'dr.exclude_reason',
      installTime: 'dr.install_time',
      timeLimit: 'dr.time_limit',
      testCaseAllCount: 'dr.test_case_all_count',
      testCasePassedCount: 'dr.test_case_passed_count',
      testCaseFailedCount: 'dr.test_case_failed_count',
      testCaseSkippedCount: 'dr.test_case_skipped_count',
      retryState: 'dr.retry_state',
      autoRetriesLeftCount: 'dr.auto_retries_left_count',
      testRunId: 'dr.test_run_id',
      projectId: 'dr.project_id',
      userId: 'dr.user_id',
      deviceName: 'd.display_name',
      // As the presenter: passed over executed (passed + failed), 0 when none ran.
      successRatio:
        'COALESCE(dr.test_case_passed_count * 1.0 / NULLIF(dr.test_case_passed_count + dr.test_case_failed_count, 0), 0)',
      deviceRunId: 'dr.id',
      deviceSessionId: 'dr.id',
      testCaseSuccessCount: 'dr.test_case_passed_count',
      testCaseAllNo: 'dr.test_case_all_count',
      testCaseSuccessNo: 'dr.test_case_passed_count',
      testCasePassedNo: 'dr.test_case_passed_count',
      testCaseFailedNo: 'dr.test_case_failed_count',
      testCaseSkippedNo: 'dr.test_case_skipped_count',
      testCaseCount: 'dr.test_case_all_count',
      // As the presenter: interactive sessions are the established service's manual ones.
      type: "(CASE WHEN dr.framework_kind = 'interactive' THEN 'MANUAL' ELSE 'AUTOMATIC' END)",
      userEmail: '(SELECT u.email FROM users u WHERE u.id = dr.user_id)',
      testRunName: "(SELECT COALESCE(t.name, 'Test Run ' || t.number) FROM test_runs t WHERE t.id = dr.test_run_id)",
      projectName: '(SELECT p.name FROM projects p WHERE p.id = dr.project_id)',
      accountId: 'dr.user_id',
      deviceInstanceId: 'dr.device_id',
      name: 'd.display_name',
      duration,
      deviceTime: duration,
      runTime: duration,
      // Constants as the presenter shows them (a bare 0 would be a column position in ORDER BY).
      billable: 'CAST(0 AS INTEGER)',
      config: 'CAST(NULL AS VARCHAR(16))',
      clientSideId: 'CAST(NULL AS VARCHAR(16))',
      externalId: 'CAST(NULL AS VARCHAR(16))',
      deviceLogFirstTimestamp: 'CAST(NULL AS BIGINT)',
      interruptedByState: 'CAST(NULL AS VARCHAR(16))',
      runStatus: LEGACY_STATUS,
      // As domain/runs.ts whyNotRetryable.
      retryable: "(CASE WHEN dr.superseded = 0 AND dr.state NOT IN ('WAITING', 'EXCLUDED') THEN 1 ELSE 0 END)",
      biometricInstrumentation: 'CAST(0 AS INTEGER)',
      // As the presenter: an aborted session's end.
      abortTime: "(CASE WHEN dr.state = 'ABORTED' THEN dr.end_time END)",
    },
    searchColumns: ['d.display_name'],
    tieBreaker: 'dr.id',
  };
}
