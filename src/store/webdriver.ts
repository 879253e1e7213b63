/**
 * Appium client side sessions and their commands (migration 025). A command is inserted PENDING by
 * the server that received it, taken by the agent holding the session's device (from whichever
 * server it polls), and answered; the rows stay as the session's command log.
 */
import type { Kysely } from 'kysely';
import type { LoggedCommand, WebDriverCommand, WebDriverSession } from '../domain/webdriver.ts';
import type { Tables } from './schema.ts';

type CommandRow = Tables['webdriver_commands'] & { id: number };

const ROWS_PER_INSERT = 100;

const toCommand = (row: CommandRow): WebDriverCommand => ({
  id: Number(row.id),
  deviceRunId: Number(row.device_run_id),
  method: row.method,
  path: row.path,
  body: row.body,
  state: row.state,
  status: row.status === null ? null : Number(row.status),
  answer: row.answer,
  createTime: Number(row.create_time),
  answerTime: row.answer_time === null ? null : Number(row.answer_time),
});

export function webDriverStore(db: Kysely<Tables>) {
  return {
    async insertSession(session: WebDriverSession): Promise<void> {
      await db
        .insertInto('webdriver_sessions')
        .values({
          id: session.id,
          device_run_id: session.deviceRunId,
          user_id: session.userId,
          create_time: session.createTime,
          end_time: session.endTime,
        })
        .execute();
    },

    async session(id: string): Promise<WebDriverSession | undefined> {
      const row = await db.selectFrom('webdriver_sessions').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toSession(row);
    },

    async sessionOfDeviceRun(deviceRunId: number): Promise<WebDriverSession | undefined> {
      const row = await db
        .selectFrom('webdriver_sessions')
        .selectAll()
        .where('device_run_id', '=', deviceRunId)
        .executeTakeFirst();
      return row && toSession(row);
    },

    async endSession(id: string, now: number): Promise<void> {
      await db
        .updateTable('webdriver_sessions')
        .set({ end_time: now })
        .where('id', '=', id)
        .where('end_time', 'is', null)
        .execute();
    },

    async insertCommand(command: { deviceRunId: number; method: string; path: string; body: string; now: number }) {
      const row = await db
        .insertInto('webdriver_commands')
        .values({
          device_run_id: command.deviceRunId,
          method: command.method,
          path: command.path,
          body: command.body,
          state: 'PENDING',
          status: null,
          answer: null,
          create_time: command.now,
          answer_time: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    },

    /**
     * Commands relayed in memory (services/webdriver-channels.ts), logged once answered, several
     * per statement (services/webdriver-log.ts), in the order given.
     */
    async insertAnswered(commands: readonly LoggedCommand[]): Promise<void> {
      // Within SQLite's bound on a statement's parameters, whatever its build.
      for (let from = 0; from < commands.length; from += ROWS_PER_INSERT)
        await db
          .insertInto('webdriver_commands')
          .values(
            commands.slice(from, from + ROWS_PER_INSERT).map((command) => ({
              device_run_id: command.deviceRunId,
              method: command.method,
              path: command.path,
              body: command.body,
              state: 'ANSWERED' as const,
              status: command.status,
              answer: command.answer,
              create_time: command.createTime,
              answer_time: command.answerTime,
            })),
          )
          .execute();
    },

    async command(id: number): Promise<WebDriverCommand | undefined> {
      const row = await db.selectFrom('webdriver_commands').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toCommand(row as CommandRow);
    },

    /** Marks the pending commands of a device run taken and answers them, oldest first. */
    async takePending(deviceRunId: number): Promise<WebDriverCommand[]> {
      const rows = await db
        .updateTable('webdriver_commands')
        .set({ state: 'TAKEN' })
        .where('device_run_id', '=', deviceRunId)
        .where('state', '=', 'PENDING')
        .returningAll()
        .execute();
      return (rows as CommandRow[]).map(toCommand).sort((a, b) => a.id - b.id);
    },

    /** Commands taken by a poll whose answer never left: the next poll takes them again. */
    async untake(deviceRunId: number, ids: readonly number[]): Promise<void> {
      if (ids.length === 0) return;
      await db
        .updateTable('webdriver_commands')
        .set({ state: 'PENDING' })
        .where('device_run_id', '=', deviceRunId)
        .where('id', 'in', ids)
        .where('state', '=', 'TAKEN')
        .execute();
    },

    /** True when this answer was the first for the command (a retried answer changes nothing). */
    async answer(id: number, deviceRunId: number, status: number, answer: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable('webdriver_commands')
        .set({ state: 'ANSWERED', status, answer, answer_time: now })
        .where('id', '=', id)
        .where('device_run_id', '=', deviceRunId)
        .where('state', '!=', 'ANSWERED')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /**
     * Leaves the answer to a command relayed in memory by another server (migration 026); true
     * when it is the first for that command.
     */
    async handOff(answer: {
      commandId: number;
      deviceRunId: number;
      status: number;
      answer: string;
      now: number;
    }): Promise<boolean> {
      const result = await db
        .insertInto('webdriver_handoffs')
        .values({
          command_id: answer.commandId,
          device_run_id: answer.deviceRunId,
          status: answer.status,
          answer: answer.answer,
          answer_time: answer.now,
        })
        .onConflict((conflict) => conflict.column('command_id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    /** Takes (deletes) the answer another server left for a command relayed in memory here. */
    async takeHandoff(commandId: number, deviceRunId: number): Promise<{ status: number; body: string } | undefined> {
      const row = await db
        .deleteFrom('webdriver_handoffs')
        .where('command_id', '=', commandId)
        .where('device_run_id', '=', deviceRunId)
        .returning(['status', 'answer'])
        .executeTakeFirst();
      return row && { status: Number(row.status), body: row.answer };
    },

    /** Answers left for a session's commands that no server took (a retried answer, a server gone). */
    async dropHandoffs(deviceRunId: number): Promise<void> {
      await db.deleteFrom('webdriver_handoffs').where('device_run_id', '=', deviceRunId).execute();
    },

    /**
     * The newest run of this name in the project started by Appium client side sessions on `app`
     * (or none), not finished before `since`: the run a new session of the same CI job joins.
     */
    async joinableRun(
      projectId: number,
      name: string,
      frameworkId: number,
      since: number,
    ): Promise<{ id: number; config: string } | undefined> {
      const row = await db
        .selectFrom('test_runs')
        .select(['id', 'config_json'])
        .where('project_id', '=', projectId)
        .where('name', '=', name)
        .where('framework_id', '=', frameworkId)
        .where((eb) => eb.or([eb('end_time', 'is', null), eb('end_time', '>=', since)]))
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row && { id: Number(row.id), config: row.config_json };
    },

    /** The command log of a device run, oldest first. */
    async commands(
      deviceRunId: number,
      offset: number,
      limit: number,
    ): Promise<{ rows: WebDriverCommand[]; total: number }> {
      const rows = await db
        .selectFrom('webdriver_commands')
        .selectAll()
        .where('device_run_id', '=', deviceRunId)
        .orderBy('id')
        .offset(offset)
        .limit(limit)
        .execute();
      const count = await db
        .selectFrom('webdriver_commands')
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .where('device_run_id', '=', deviceRunId)
        .executeTakeFirstOrThrow();
      return { rows: (rows as CommandRow[]).map(toCommand), total: Number(count.total) };
    },
  };
}

function toSession(row: Tables['webdriver_sessions']): WebDriverSession {
  return {
    id: row.id,
    deviceRunId: Number(row.device_run_id),
    userId: Number(row.user_id),
    createTime: Number(row.create_time),
    endTime: row.end_time === null ? null : Number(row.end_time),
  };
}
