/** A device run's step timeline: its steps, the current one, notes on them. */
import { type Kysely, type Selectable, sql } from 'kysely';
import { DEVICE_RUN_MACHINE, type Step, type StepType } from '../domain/runs.ts';
import type { Dialect } from './db.ts';
import type { Tables } from './schema.ts';
import { inIds } from './sql.ts';

export function deviceRunStepsStore(db: Kysely<Tables>, dialect: Dialect) {
  async function appendStep(id: number, type: StepType, time: number, failReason: string | null = null): Promise<void> {
    await db
      .updateTable('device_run_steps')
      .set({ finish_time: time })
      .where('device_run_id', '=', id)
      .where('finish_time', 'is', null)
      .execute();
    await db
      .insertInto('device_run_steps')
      .values({ device_run_id: id, type, start_time: time, fail_reason: failReason })
      .execute();
  }

  /**
   * Moves a device run through new steps, in order: closes the open step, opens each in turn
   * (each closed by the next), the last left open. INSTALL records the install time;
   * SENDING_RESULTS means the run is FINISHING. Four statements however many steps an agent's
   * report holds (it was four or five a step).
   */
  async function recordSteps(
    id: number,
    reported: ReadonlyArray<{ readonly type: StepType; readonly time: number; readonly failReason?: string | null }>,
  ): Promise<void> {
    if (reported.length === 0) return;
    const current = await db.selectFrom('device_runs').select('current_step').where('id', '=', id).executeTakeFirst();
    // The server opens PREPARING at the claim and the driver may report it again: one step.
    let previous = current?.current_step ?? null;
    const steps = reported.filter((step) => {
      const repeated = step.type === previous;
      previous = step.type;
      return !repeated;
    });
    const last = steps.at(-1);
    if (last === undefined) return;
    await db
      .updateTable('device_run_steps')
      .set({ finish_time: steps[0]!.time })
      .where('device_run_id', '=', id)
      .where('finish_time', 'is', null)
      .execute();
    await db
      .insertInto('device_run_steps')
      .values(
        steps.map((step, i) => ({
          device_run_id: id,
          type: step.type,
          start_time: step.time,
          finish_time: steps[i + 1]?.time ?? null,
          fail_reason: step.failReason ?? null,
        })),
      )
      .execute();
    const installed = steps.findLast((step) => step.type === 'INSTALL');
    const sendsResults = steps.some((step) => step.type === 'SENDING_RESULTS');
    await db
      .updateTable('device_runs')
      .set((eb) => ({
        current_step: last.type,
        current_step_start_time: last.time,
        ...(installed !== undefined && { install_time: installed.time }),
        ...(sendsResults && {
          state: eb
            .case()
            .when('state', 'in', DEVICE_RUN_MACHINE.from('sendResults'))
            .then(DEVICE_RUN_MACHINE.target('sendResults'))
            .else(eb.ref('state'))
            .end(),
        }),
      }))
      .where('id', '=', id)
      .execute();
  }

  return {
    /** The step timeline alone: closes the open step, opens `type` (the caller sets current_step). */
    appendStep,

    /**
     * Adds a note to the reason of the device run's newest step (e.g. an artifact not kept), after
     * any reason it has; a reason already long is left as it is, so that notes stay bounded.
     */
    async noteOnLatestStep(id: number, note: string): Promise<void> {
      const latest = db
        .selectFrom('device_run_steps')
        .select((eb) => eb.fn.max('id').as('id'))
        .where('device_run_id', '=', id);
      await db
        .updateTable('device_run_steps')
        .set({
          fail_reason: sql<string>`CASE WHEN fail_reason IS NULL THEN ${note} ELSE fail_reason || '; ' || ${note} END`,
        })
        .where('id', '=', latest)
        .where((eb) => eb.or([eb('fail_reason', 'is', null), eb(sql`LENGTH(fail_reason)`, '<', 2000)]))
        .execute();
    },

    /** One step: recordSteps with a single one. */
    async recordStep(id: number, type: StepType, time: number, failReason: string | null = null): Promise<void> {
      await recordSteps(id, [{ type, time, failReason }]);
    },

    recordSteps,

    /** The steps of several device runs in one statement, by device run then in order. */
    async stepsOfMany(deviceRunIds: readonly number[]): Promise<Step[]> {
      if (deviceRunIds.length === 0) return [];
      const rows = await db
        .selectFrom('device_run_steps')
        .selectAll()
        .where(inIds(dialect, 'device_run_id', deviceRunIds))
        .orderBy('device_run_id')
        .orderBy('id')
        .execute();
      return rows.map(toStep);
    },

    async steps(deviceRunId: number): Promise<Step[]> {
      const rows = await db
        .selectFrom('device_run_steps')
        .selectAll()
        .where('device_run_id', '=', deviceRunId)
        .orderBy('id')
        .execute();
      return rows.map(toStep);
    },
  };
}

function toStep(row: Selectable<Tables['device_run_steps']>): Step {
  return {
    id: row.id,
    deviceRunId: row.device_run_id,
    type: row.type as StepType,
    startTime: row.start_time,
    finishTime: row.finish_time,
    failReason: row.fail_reason,
  };
}
