/**
 * The account pages' figures, added up in SQL over one user's runs (domain/account-figures.ts):
 * a fixed number of statements whatever the number of runs, on both engines.
 */
import { type Kysely, sql } from 'kysely';
import {
  DAY_MS,
  type DeviceUsage,
  type DeviceUsageDay,
  FAILED_SESSION_STATES,
  type Period,
  type UserStatistics,
} from '../domain/account-figures.ts';
import type { ListQuery } from '../domain/list-query.ts';
import { isCurrentDeviceRun } from './current-device-runs.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { type ListSql, inIds, listConditions, pageOf } from './sql.ts';

type UsageField = 'id' | 'deviceName' | 'totalDeviceSessions' | 'failedDeviceSessions' | 'deviceTime';

const USAGE_SQL: ListSql<UsageField> = {
  columns: {
    id: 'u.device_id',
    deviceName: 'u.device_name',
    totalDeviceSessions: 'u.total',
    failedDeviceSessions: 'u.failed',
    deviceTime: 'u.device_time',
  },
  searchColumns: ['u.device_name'],
  tieBreaker: 'u.device_id',
};

const FAILED = sql.join(FAILED_SESSION_STATES.map((state) => sql`${state}`));

export type AccountFiguresStore = ReturnType<typeof accountFiguresStore>;

export function accountFiguresStore(db: Kysely<Tables>, dialect: Dialect) {
  /** Device time of a session: until now while it still runs. */
  const sessionTime = (now: number) => sql<number>`COALESCE(dr.end_time, ${now}) - dr.start_time`;
  /** The user's current device sessions that a device started, in the period. */
  const sessions = (userId: number, period: Period) => {
    let query = db
      .selectFrom('device_runs as dr')
      .where('dr.user_id', '=', userId)
      .where(isCurrentDeviceRun('dr'))
      .where('dr.start_time', 'is not', null);
    if (period.from !== null) query = query.where('dr.start_time', '>=', period.from);
    if (period.to !== null) query = query.where('dr.start_time', '<', period.to);
    return query;
  };

  return {
    async statistics(userId: number, period: Period, now: number): Promise<UserStatistics> {
      let runs = db.selectFrom('test_runs').where('user_id', '=', userId);
      if (period.from !== null) runs = runs.where('create_time', '>=', period.from);
      if (period.to !== null) runs = runs.where('create_time', '<', period.to);
      const runRow = await runs
        .select([
          sql<number>`COUNT(*)`.as('total'),
          sql<number>`SUM(CASE WHEN state <> 'FINISHED' THEN 1 ELSE 0 END)`.as('running'),
        ])
        .executeTakeFirstOrThrow();
      const sessionRow = await sessions(userId, period)
        .select([
          sql<number>`COUNT(DISTINCT dr.device_id)`.as('devices'),
          sql<number>`COUNT(*)`.as('total'),
          sql<number>`SUM(CASE WHEN dr.state = 'SUCCEEDED' THEN 1 ELSE 0 END)`.as('succeeded'),
          sql<number>`SUM(CASE WHEN dr.state IN (${FAILED}) THEN 1 ELSE 0 END)`.as('failed'),
          sql<number>`SUM(dr.test_case_all_count)`.as('cases'),
          sql<number>`SUM(dr.test_case_passed_count)`.as('passed'),
          sql<number>`SUM(dr.test_case_failed_count)`.as('failed_cases'),
          sql<number>`SUM(${sessionTime(now)})`.as('device_time'),
        ])
        .executeTakeFirstOrThrow();
      const projectRow = await db
        .selectFrom('projects')
        .where('user_id', '=', userId)
        .select(sql<number>`COUNT(*)`.as('total'))
        .executeTakeFirstOrThrow();
      return {
        allTimeProjects: Number(projectRow.total),
        totalTestRuns: Number(runRow.total),
        runningTestRuns: Number(runRow.running ?? 0),
        devicesUsed: Number(sessionRow.devices),
        totalDeviceSessions: Number(sessionRow.total),
        succeededDeviceSessions: Number(sessionRow.succeeded ?? 0),
        failedDeviceSessions: Number(sessionRow.failed ?? 0),
        totalTestCases: Number(sessionRow.cases ?? 0),
        passedTestCases: Number(sessionRow.passed ?? 0),
        failedTestCases: Number(sessionRow.failed_cases ?? 0),
        deviceTime: Number(sessionRow.device_time ?? 0),
      };
    },

    /** One row per device the user's sessions ran on, with its time per day; paged by the list grammar. */
    async deviceUsage(
      userId: number,
      period: Period,
      query: ListQuery<UsageField>,
      now: number,
    ): Promise<{ total: number; items: DeviceUsage[] }> {
      const perDevice = sessions(userId, period)
        .innerJoin('devices as d', 'd.id', 'dr.device_id')
        .select([
          'dr.device_id as device_id',
          sql<string>`MAX(d.display_name)`.as('device_name'),
          sql<number>`COUNT(*)`.as('total'),
          sql<number>`SUM(CASE WHEN dr.state IN (${FAILED}) THEN 1 ELSE 0 END)`.as('failed'),
          sql<number>`SUM(${sessionTime(now)})`.as('device_time'),
        ])
        .groupBy('dr.device_id');
      const conditions = listConditions(dialect, query, USAGE_SQL);
      const base = db.selectFrom(perDevice.as('u')).where((eb) => eb.and(conditions));
      const { total, rows } = await pageOf(base, (q) => q.selectAll(), query, USAGE_SQL);
      const ids = rows.map((row) => Number(row.device_id));
      const days = new Map<number, DeviceUsageDay[]>();
      if (ids.length > 0) {
        // A constant of ours spelt out, not bound: PostgreSQL groups by an expression only when
        // the selected one is the same text, and two bound parameters are two different ones.
        const day = sql<number>`(dr.start_time / ${sql.raw(String(DAY_MS))}) * ${sql.raw(String(DAY_MS))}`;
        const dayRows = await sessions(userId, period)
          .where(inIds(dialect, 'dr.device_id', ids))
          .select([
            'dr.device_id as device_id',
            day.as('day'),
            sql<number>`COUNT(*)`.as('sessions'),
            sql<number>`SUM(${sessionTime(now)})`.as('device_time'),
          ])
          .groupBy(['dr.device_id', day])
          .orderBy('day')
          .execute();
        for (const row of dayRows) {
          const list = days.get(Number(row.device_id)) ?? [];
          list.push({
            day: Number(row.day),
            deviceSessions: Number(row.sessions),
            deviceTime: Number(row.device_time),
          });
          days.set(Number(row.device_id), list);
        }
      }
      return {
        total,
        items: rows.map((row) => ({
          deviceId: Number(row.device_id),
          totalDeviceSessions: Number(row.total),
          failedDeviceSessions: Number(row.failed),
          deviceTime: Number(row.device_time),
          days: days.get(Number(row.device_id)) ?? [],
        })),
      };
    },
  };
}
