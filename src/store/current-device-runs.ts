/**
 * The one rule of which device runs are current: a retried device run is replaced by its new
 * session and leaves every list of device runs or sessions, and every count and tally of its run;
 * it stays readable by its own id (docs/api.md#abort-retry-timeout). Every query that lists or
 * counts device runs filters with it, so that a new list cannot forget the rule.
 */
import { type SqlBool, sql } from 'kysely';

/** The condition on `device_runs` (or on an alias of it, e.g. `dr`) that keeps the current ones. */
export function isCurrentDeviceRun(table = 'device_runs') {
  return sql<SqlBool>`${sql.raw(currentDeviceRunText(table))}`;
}

/** The same condition as SQL text, for the queries written as text (test-runs.ts's counters); `table` is ours, never input. */
export function currentDeviceRunText(table = 'device_runs'): string {
  return `${table}.superseded = 0`;
}
