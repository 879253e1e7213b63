/**
 * The queue's SQL: which waiting device run a free device takes next (the owner's plan first, then
 * age), taking it without ever giving one device two runs or one run two devices, leases that
 * prove an agent still holds its runs, and where a waiting run stands in line.
 */
import { type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { toDeviceRun } from './device-runs.ts';
import { isCurrentDeviceRun } from './current-device-runs.ts';
import { inIds } from './sql.ts';
import { DEVICE_MACHINE } from '../domain/devices.ts';
import { DEVICE_RUN_MACHINE, type DeviceRun, HELD_DEVICE_RUN_STATES } from '../domain/runs.ts';

export interface QueueStanding {
  readonly deviceRunId: number;
  readonly deviceId: number;
  /** Waiting device runs on the same device that go first. */
  readonly ahead: number;
}

export type QueueStore = ReturnType<typeof queueStore>;

/** Namespace of the advisory locks on runs whose device runs must not start together. */
const RUN_GROUP_LOCK = 0x6463;

export function queueStore(db: Kysely<Tables>, dialect: Dialect) {
  return {
    /**
     * Gives `deviceId` its next device run (RUNNING, PREPARING), or nothing. Call inside a transaction. The device is
     * taken first (IDLE to TESTING), so it never runs two device runs at once. On PostgreSQL the
     * candidate row is locked as it is found (SKIP LOCKED: a claim never waits on another's row),
     * and a device run of a SERIAL or SINGLE run is taken only under an advisory lock on its run,
     * tried without waiting (a claim holding a row lock never waits on a lock, so claims never
     * deadlock) and checked again once held: two devices claiming at once can never both start a
     * SERIAL run's device runs, or a SINGLE run twice. A claim that finds the run's lock taken
     * passes over that device run: the holder is starting a device run of the same group, which
     * would make it wait anyway. Also answers whether the run was RUNNING already (read with the
     * update, a statement less than asking).
     */
    async claimNext(
      deviceId: number,
      agentId: number,
      now: number,
      leaseUntil: number,
    ): Promise<{ deviceRun: DeviceRun; runRunning: boolean } | undefined> {
      const device = await db
        .updateTable('devices')
        .set({ state: DEVICE_MACHINE.target('claim'), state_reason: null })
        .where('id', '=', deviceId)
        .where('agent_id', '=', agentId)
        .where('state', 'in', DEVICE_MACHINE.from('claim'))
        .where('online', '=', 1)
        .where('enabled', '=', 1)
        .executeTakeFirst();
      if (Number(device.numUpdatedRows) === 0) return undefined;

      const serialFree = (eb: ExpressionBuilder<Tables & { dr: Tables['device_runs'] }, 'dr'>) =>
        eb.or([
          eb('dr.serial_group', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('device_runs as other')
                .select('other.id')
                .whereRef('other.serial_group', '=', 'dr.serial_group')
                .where('other.state', 'in', HELD_DEVICE_RUN_STATES),
            ),
          ),
        ]);
      const passedOver: number[] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        let candidate = db
          .selectFrom('device_runs as dr')
          .select(['dr.id', 'dr.serial_group', 'dr.single_group'])
          .where('dr.device_id', '=', deviceId)
          .where('dr.state', 'in', DEVICE_RUN_MACHINE.from('claim'))
          .where(serialFree)
          .orderBy('dr.priority', 'desc')
          .orderBy('dr.create_time', 'asc')
          .orderBy('dr.id', 'asc')
          .limit(1);
        if (passedOver.length > 0)
          candidate = candidate.where(sql<SqlBool>`NOT (${inIds(dialect, 'dr.id', passedOver)})`);
        if (dialect === 'postgres') candidate = candidate.forUpdate().skipLocked();
        const found = await candidate.executeTakeFirst();
        if (found === undefined) break;
        const group = found.serial_group ?? found.single_group;
        if (dialect === 'postgres' && group !== null && !(await lockGroupAndCheck(found.id, group))) {
          passedOver.push(found.id);
          continue;
        }
        // Taken, and PREPARING (the caller opens the timeline with that step).
        const taken = await db
          .updateTable('device_runs')
          .set({
            state: DEVICE_RUN_MACHINE.target('claim'),
            agent_id: agentId,
            start_time: now,
            lease_expires_time: leaseUntil,
            current_step: 'PREPARING',
            current_step_start_time: now,
          })
          .where('id', '=', found.id)
          .where('state', 'in', DEVICE_RUN_MACHINE.from('claim'))
          .returningAll()
          .returning((eb) =>
            eb
              .selectFrom('test_runs')
              .select('test_runs.state')
              .whereRef('test_runs.id', '=', 'device_runs.test_run_id')
              .as('run_state'),
          )
          .executeTakeFirst();
        if (taken !== undefined) return { deviceRun: toDeviceRun(taken), runRunning: taken.run_state === 'RUNNING' };
        passedOver.push(found.id);
      }
      await db
        .updateTable('devices')
        .set({ state: DEVICE_MACHINE.target('unclaim') })
        .where('id', '=', deviceId)
        .where('state', 'in', DEVICE_MACHINE.from('unclaim'))
        .execute();
      return undefined;

      /** PostgreSQL: the run's advisory lock if free, and then whether its device run may still start. */
      async function lockGroupAndCheck(deviceRunId: number, group: number): Promise<boolean> {
        const lock = await sql<{
          locked: boolean;
        }>`SELECT pg_try_advisory_xact_lock(${RUN_GROUP_LOCK}::int, (${group}::bigint % 2147483647)::int) AS locked`.execute(
          db,
        );
        if (lock.rows[0]?.locked !== true) return false;
        // Read again now that the lock is held: a device run of the group started by the lock's
        // previous holder committed before this statement began.
        const still = await db
          .selectFrom('device_runs as dr')
          .select('dr.id')
          .where('dr.id', '=', deviceRunId)
          .where('dr.state', 'in', DEVICE_RUN_MACHINE.from('claim'))
          .where(serialFree)
          .executeTakeFirst();
        return still !== undefined;
      }
    },

    /**
     * Of these devices, those with a waiting device run: a claim tries only them. Trying every
     * free device took and gave back each device's row in a transaction of its own, which was most
     * of what an idle fleet cost PostgreSQL, and what claims of busy agents waited on.
     */
    async withWaitingWork(deviceIds: readonly number[]): Promise<Set<number>> {
      if (deviceIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('device_runs')
        .select('device_id')
        .distinct()
        .where(inIds(dialect, 'device_id', deviceIds))
        .where('state', '=', 'WAITING')
        .execute();
      return new Set(rows.map((row) => row.device_id));
    },

    /** The other waiting device runs of a SINGLE run, once one of its devices took it. */
    async siblingsOfSingle(deviceRunId: number): Promise<number[]> {
      const rows = await db
        .selectFrom('device_runs as dr')
        .innerJoin('device_runs as taken', 'taken.single_group', 'dr.single_group')
        .select('dr.id')
        .where('taken.id', '=', deviceRunId)
        .where('dr.id', '<>', deviceRunId)
        .where('dr.state', '=', 'WAITING')
        .execute();
      return rows.map((row) => row.id);
    },

    async extendLeases(agentId: number, deviceRunIds: readonly number[], leaseUntil: number): Promise<void> {
      if (deviceRunIds.length === 0) return;
      await db
        .updateTable('device_runs')
        .set({ lease_expires_time: leaseUntil })
        .where('agent_id', '=', agentId)
        .where('state', 'in', HELD_DEVICE_RUN_STATES)
        .where(inIds(dialect, 'id', deviceRunIds))
        .execute();
    },

    /**
     * PostgreSQL: share-locks (until the commit) another device run of the run that an agent still
     * holds, and says whether there was one and the run is RUNNING. While it is locked, nothing can
     * end it; whatever ends it later waits for this commit, and then sees this transaction's device
     * run ended. So the run cannot finish before it does, and the one that ends it decides: a
     * device run's end need not lock the run (which every end of a run's device runs queued on).
     * Rows locked by another transaction (being ended now) are skipped; without one, the caller
     * locks the run as before. SQLite runs one writer at a time: always false there.
     */
    async holdRunningSibling(testRunId: number, deviceRunId: number): Promise<boolean> {
      if (dialect !== 'postgres') return false;
      const row = await db
        .selectFrom('device_runs')
        .innerJoin('test_runs', 'test_runs.id', 'device_runs.test_run_id')
        .select('device_runs.id')
        .where('device_runs.test_run_id', '=', testRunId)
        .where('device_runs.id', '<>', deviceRunId)
        .where(isCurrentDeviceRun())
        .where('device_runs.state', 'in', HELD_DEVICE_RUN_STATES)
        // In the same statement: asking the run's state apart cost a statement per device run's end.
        .where('test_runs.state', '=', 'RUNNING')
        .limit(1)
        .forShare('device_runs')
        .skipLocked()
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Renews every running device run's lease to at least `leaseUntil` (a server starting after an outage). */
    async extendAllLeases(leaseUntil: number): Promise<void> {
      await db
        .updateTable('device_runs')
        .set({ lease_expires_time: leaseUntil })
        .where('state', 'in', HELD_DEVICE_RUN_STATES)
        .where('lease_expires_time', '<', leaseUntil)
        .execute();
    },

    /** Device runs whose agent stopped renewing their lease. */
    async expiredLeases(now: number, limit = 500): Promise<number[]> {
      const rows = await db
        .selectFrom('device_runs')
        .select('id')
        .where('state', 'in', HELD_DEVICE_RUN_STATES)
        .where('lease_expires_time', '<', now)
        .limit(limit)
        .execute();
      return rows.map((row) => row.id);
    },

    /** Running device runs an agent holds (to fail them when it restarts and has lost them). */
    async heldBy(agentId: number): Promise<number[]> {
      const rows = await db
        .selectFrom('device_runs')
        .select('id')
        .where('agent_id', '=', agentId)
        .where('state', 'in', HELD_DEVICE_RUN_STATES)
        .execute();
      return rows.map((row) => row.id);
    },

    /**
     * Device runs the agent holds on devices it calls free and is not running: it never received
     * their assignment (the answer to its claim was lost), so they are handed out again.
     */
    async undelivered(
      agentId: number,
      freeDeviceIds: readonly number[],
      running: readonly number[],
    ): Promise<DeviceRun[]> {
      if (freeDeviceIds.length === 0) return [];
      let query = db
        .selectFrom('device_runs')
        .selectAll()
        .where('agent_id', '=', agentId)
        .where('state', '=', 'RUNNING')
        .where(inIds(dialect, 'device_id', freeDeviceIds));
      if (running.length > 0) query = query.where(sql<SqlBool>`NOT (${inIds(dialect, 'id', running)})`);
      // Whole rows: the claim builds their assignments again without reading each one back.
      return (await query.execute()).map(toDeviceRun);
    },

    /**
     * Devices the agent calls free that are still TESTING here with no device run in progress: the
     * device run they were given ended (its lease ran out, or it was aborted) before the agent ever
     * received it. They go to CLEANING, and the agent is told to clean them, so that they take work again.
     */
    async releaseStranded(agentId: number, freeDeviceIds: readonly number[]): Promise<number[]> {
      if (freeDeviceIds.length === 0) return [];
      const rows = await db
        .updateTable('devices')
        .set({ state: DEVICE_MACHINE.target('stranded') })
        .where('agent_id', '=', agentId)
        .where('state', 'in', DEVICE_MACHINE.from('stranded'))
        .where(inIds(dialect, 'id', freeDeviceIds))
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('device_runs')
                .select('device_runs.id')
                .whereRef('device_runs.device_id', '=', 'devices.id')
                .where('device_runs.state', 'in', HELD_DEVICE_RUN_STATES),
            ),
          ),
        )
        .returning('id')
        .execute();
      return rows.map((row) => row.id);
    },

    /** Of the ids an agent says it is running, those the server has already ended (aborted, timed out). */
    async endedAmong(agentId: number, deviceRunIds: readonly number[]): Promise<number[]> {
      if (deviceRunIds.length === 0) return [];
      const rows = await db
        .selectFrom('device_runs')
        .select('id')
        .where(inIds(dialect, 'id', deviceRunIds))
        .where((eb) =>
          eb.or([
            eb('state', 'not in', HELD_DEVICE_RUN_STATES),
            eb('agent_id', 'is', null),
            eb('agent_id', '<>', agentId),
          ]),
        )
        .execute();
      return rows.map((row) => row.id);
    },

    /** Where each waiting device run of these test runs stands on its device, in one statement. */
    async standings(testRunIds: readonly number[]): Promise<QueueStanding[]> {
      if (testRunIds.length === 0) return [];
      const rows = await db
        .selectFrom('device_runs as dr')
        .select([
          'dr.id',
          'dr.device_id',
          sql<number>`(SELECT COUNT(*) FROM device_runs o WHERE o.device_id = dr.device_id AND o.state = 'WAITING'
            AND (o.priority > dr.priority OR (o.priority = dr.priority AND (o.create_time < dr.create_time
            OR (o.create_time = dr.create_time AND o.id < dr.id)))))`.as('ahead'),
        ])
        .where(inIds(dialect, 'dr.test_run_id', testRunIds))
        .where('dr.state', '=', 'WAITING')
        .execute();
      return rows.map((row) => ({ deviceRunId: row.id, deviceId: row.device_id, ahead: Number(row.ahead) }));
    },

    /** A plan change reorders the owner's waiting device runs. */
    async reprioritize(userId: number, priority: number): Promise<void> {
      await db
        .updateTable('device_runs')
        .set({ priority })
        .where('user_id', '=', userId)
        .where('state', '=', 'WAITING')
        .execute();
    },
  };
}
