/**
 * The state machines alone (domain/state-machine.ts): the device and device-run tables, written out
 * here as the from-state → to-states tables a reader checks them against, and the run's state,
 * derived from its device runs however their events interleave.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEVICE_MACHINE, DEVICE_STATES, type DeviceEvent, type DeviceState } from '../../src/domain/devices.ts';
import { IllegalTransitionError } from '../../src/domain/errors.ts';
import {
  DEVICE_RUN_MACHINE,
  DEVICE_RUN_STATES,
  type DeviceRunState,
  FINAL_DEVICE_RUN_STATES,
  HELD_DEVICE_RUN_STATES,
  type TestRun,
  type TestRunState,
  UNFINISHED_DEVICE_RUN_STATES,
  UNSTARTED_DEVICE_RUN_STATES,
  runStateOf,
  runUpdate,
  whyNotRetryable,
} from '../../src/domain/runs.ts';
import type { StateMachine } from '../../src/domain/state-machine.ts';

type DeviceRunEvent = keyof typeof DEVICE_RUN_MACHINE.events;

/** Every (from, event, to) the table allows. */
function allowed<S extends string, E extends string>(machine: StateMachine<S, E>): Array<[S, E, S]> {
  return (Object.keys(machine.events) as E[]).flatMap((event) =>
    machine.events[event].from.flatMap((from) => machine.events[event].to.map((to): [S, E, S] => [from, event, to])),
  );
}

/** States reachable from `start` by any number of transitions. */
function reachable<S extends string>(machine: StateMachine<S, string>, start: readonly S[]): Set<S> {
  const seen = new Set(start);
  const todo = [...start];
  for (let state = todo.pop(); state !== undefined; state = todo.pop()) {
    for (const next of machine.successors(state).filter((next) => !seen.has(next))) {
      seen.add(next);
      todo.push(next);
    }
  }
  return seen;
}

describe('the device-run machine', () => {
  const machine = DEVICE_RUN_MACHINE;

  it('is this table', () => {
    const table = Object.fromEntries(DEVICE_RUN_STATES.map((state) => [state, [...machine.successors(state)].sort()]));
    expect(table).toEqual({
      WAITING: ['ABORTED', 'EXCLUDED', 'RUNNING'],
      RUNNING: ['ABORTED', 'FAILED', 'FINISHING', 'SUCCEEDED', 'TIMEOUT', 'WARNING'],
      FINISHING: ['ABORTED', 'FAILED', 'SUCCEEDED', 'TIMEOUT', 'WARNING'],
      SUCCEEDED: [],
      FAILED: [],
      WARNING: [],
      TIMEOUT: [],
      ABORTED: [],
      EXCLUDED: [],
    });
    expect(machine.initial).toEqual(['WAITING', 'EXCLUDED']);
  });

  it('allows every transition of its table', () => {
    const transitions = allowed(machine);
    expect(transitions).toHaveLength(1 + 1 + 2 * 5 + 3 + 1);
    for (const [from, event, to] of transitions) {
      expect(machine.can(from, event)).toBe(true);
      expect(machine.next(from, event, to)).toBe(to);
    }
  });

  it('refuses what its table does not have, with a typed error', () => {
    const refused: Array<[DeviceRunState, DeviceRunEvent, DeviceRunState?]> = [
      ['SUCCEEDED', 'abort'],
      ['ABORTED', 'end', 'SUCCEEDED'],
      ['WAITING', 'end', 'SUCCEEDED'],
      ['RUNNING', 'claim'],
      ['FINISHING', 'sendResults'],
      ['RUNNING', 'exclude'],
      ['EXCLUDED', 'claim'],
      ['WARNING', 'claim'],
    ];
    for (const [from, event, to] of refused) {
      expect(machine.can(from, event)).toBe(false);
      expect(() => machine.next(from, event, to)).toThrow(IllegalTransitionError);
    }
    // An event cannot lead where its table does not go, whatever the state.
    expect(() => machine.target('end', 'WAITING')).toThrow(IllegalTransitionError);
    expect(() => machine.target('end', 'EXCLUDED')).toThrow(IllegalTransitionError);
    expect(() => machine.next('RUNNING', 'abort', 'FAILED')).toThrow(/device run/);
  });

  it('gives the state sets the store queries with', () => {
    expect([...FINAL_DEVICE_RUN_STATES]).toEqual(['SUCCEEDED', 'FAILED', 'WARNING', 'TIMEOUT', 'ABORTED', 'EXCLUDED']);
    expect(UNFINISHED_DEVICE_RUN_STATES).toEqual(['WAITING', 'RUNNING', 'FINISHING']);
    expect(HELD_DEVICE_RUN_STATES).toEqual(['RUNNING', 'FINISHING']);
    expect(UNSTARTED_DEVICE_RUN_STATES).toEqual(['WAITING', 'EXCLUDED']);
  });

  it('reaches every state, and an end from every state', () => {
    expect(reachable(machine, machine.initial)).toEqual(new Set(DEVICE_RUN_STATES));
    for (const state of DEVICE_RUN_STATES)
      expect([...reachable(machine, [state])].some((s) => FINAL_DEVICE_RUN_STATES.has(s))).toBe(true);
  });
});

describe('the device machine', () => {
  const machine = DEVICE_MACHINE;

  it('is this table', () => {
    const table = Object.fromEntries(DEVICE_STATES.map((state) => [state, [...machine.successors(state)].sort()]));
    expect(table).toEqual({
      IDLE: ['CLEANING', 'IDLE', 'NOT_OPERATIONAL', 'TESTING'],
      TESTING: ['CLEANING', 'IDLE', 'NOT_OPERATIONAL'],
      CLEANING: ['CLEANING', 'IDLE', 'NOT_OPERATIONAL'],
      NOT_OPERATIONAL: ['CLEANING'],
    });
  });

  it('allows every transition of its table', () => {
    for (const [from, event, to] of allowed(machine)) expect(machine.next(from, event, to)).toBe(to);
  });

  it('refuses what its table does not have, with a typed error', () => {
    const refused: Array<[DeviceState, DeviceEvent]> = [
      ['TESTING', 'claim'],
      ['CLEANING', 'claim'],
      ['NOT_OPERATIONAL', 'claim'],
      ['NOT_OPERATIONAL', 'register'],
      ['NOT_OPERATIONAL', 'cleaned'],
      ['NOT_OPERATIONAL', 'runEnded'],
      ['NOT_OPERATIONAL', 'takeOut'],
      ['IDLE', 'returnToService'],
      ['CLEANING', 'stranded'],
      ['IDLE', 'unclaim'],
    ];
    for (const [from, event] of refused) {
      expect(machine.can(from, event)).toBe(false);
      expect(() => machine.next(from, event)).toThrow(IllegalTransitionError);
    }
  });

  it('leaves NOT_OPERATIONAL only when an operator returns the device, and a device can always work again', () => {
    const leaving = allowed(machine).filter(([from, , to]) => from === 'NOT_OPERATIONAL' && to !== 'NOT_OPERATIONAL');
    expect(leaving).toEqual([['NOT_OPERATIONAL', 'returnToService', 'CLEANING']]);
    for (const state of DEVICE_STATES) expect(reachable(machine, [state]).has('IDLE')).toBe(true);
    expect(reachable(machine, machine.initial)).toEqual(new Set(DEVICE_STATES));
  });
});

describe('any machine', () => {
  const machines = [DEVICE_MACHINE, DEVICE_RUN_MACHINE] as Array<StateMachine<string, string>>;

  it('moves only along its table, and refuses the rest without a state to show for it', () => {
    fc.assert(
      fc.property(
        fc
          .constantFrom(...machines)
          .chain((machine) =>
            fc.tuple(
              fc.constant(machine),
              fc.constantFrom(...machine.states),
              fc.constantFrom(...Object.keys(machine.events)),
              fc.option(fc.constantFrom(...machine.states), { nil: undefined }),
            ),
          ),
        ([machine, from, event, to]) => {
          let next: string | undefined;
          try {
            next = machine.next(from, event, to);
          } catch (error) {
            expect(error).toBeInstanceOf(IllegalTransitionError);
            expect(machine.can(from, event) && (to === undefined || machine.events[event]!.to.includes(to))).toBe(
              false,
            );
            return;
          }
          expect(machine.events[event]!.from).toContain(from);
          expect(machine.successors(from)).toContain(next);
          expect(next).toBe(to ?? machine.events[event]!.to[0]);
        },
      ),
    );
  });
});

/** One device run of a run in the walk below: its state, and whether a retry superseded it. */
interface Session {
  state: DeviceRunState;
  superseded: boolean;
}

/** What the store answers about a run's current device runs, from the lists its SQL uses. */
function progressOf(sessions: readonly Session[]) {
  const current = sessions.filter((session) => !session.superseded);
  return {
    unfinished: current.some((session) => UNFINISHED_DEVICE_RUN_STATES.includes(session.state)),
    started: current.some((session) => !UNSTARTED_DEVICE_RUN_STATES.includes(session.state)),
  };
}

describe("the run's state", () => {
  it('is derived from its device runs, by the same sets the store queries with', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...DEVICE_RUN_STATES), { maxLength: 8 }), (states) => {
        const update = runUpdate(
          { state: 'WAITING', startTime: null },
          progressOf(states.map((state) => ({ state, superseded: false }))),
          1,
        );
        expect(update?.state ?? 'WAITING').toBe(runStateOf(states));
      }),
    );
  });

  it('follows its device runs through any interleaving of their events and retries', () => {
    const step = fc.record({
      pick: fc.nat(),
      event: fc.constantFrom<DeviceRunEvent | 'retry'>('claim', 'sendResults', 'end', 'abort', 'exclude', 'retry'),
      outcome: fc.nat(),
    });
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<DeviceRunState>('WAITING', 'EXCLUDED'), { minLength: 1, maxLength: 5 }),
        fc.array(step, { maxLength: 40 }),
        (initial, steps) => {
          const sessions: Session[] = initial.map((state) => ({ state, superseded: false }));
          let run: Pick<TestRun, 'state' | 'startTime' | 'endTime'> = {
            state: 'WAITING',
            startTime: null,
            endTime: null,
          };
          const derive = (now: number) => {
            const before = run.state;
            const update = runUpdate(run, progressOf(sessions), now);
            const expected = runStateOf(
              sessions.filter((session) => !session.superseded).map((session) => session.state),
            );
            if (update === null) {
              expect(run.state).toBe(expected);
              expect(expected).not.toBe('FINISHED');
              return;
            }
            expect(update.state).toBe(expected);
            // The start time is set once, the first time the run leaves WAITING.
            if (update.startTime !== undefined) expect(run.startTime).toBeNull();
            if (update.state !== 'WAITING' && run.startTime === null) expect(update.startTime).toBe(now);
            if (update.state === 'FINISHED') {
              expect(update.justFinished).toBe(before !== 'FINISHED');
              expect(update.endTime).toBe(update.justFinished ? now : undefined);
            }
            run = {
              state: update.state,
              startTime: update.startTime ?? run.startTime,
              endTime: update.state === 'FINISHED' ? (update.endTime ?? run.endTime) : null,
            };
          };
          derive(0);
          for (const [index, { pick, event, outcome }] of steps.entries()) {
            const current = sessions.filter((session) => !session.superseded);
            const session = current[pick % current.length]!;
            if (event === 'retry') {
              if (whyNotRetryable({ ...session, excludeReason: null }) !== null) continue;
              // A running one is interrupted first, as run-lifecycle's retryDeviceRuns does.
              if (!FINAL_DEVICE_RUN_STATES.has(session.state))
                session.state = DEVICE_RUN_MACHINE.next(session.state, 'abort', 'ABORTED');
              session.superseded = true;
              sessions.push({ state: 'WAITING', superseded: false });
            } else {
              if (!DEVICE_RUN_MACHINE.can(session.state, event)) continue;
              const targets = DEVICE_RUN_MACHINE.events[event].to;
              session.state = DEVICE_RUN_MACHINE.next(session.state, event, targets[outcome % targets.length]);
            }
            derive(index + 1);
          }
          expect(run.state === 'FINISHED').toBe(
            sessions.every((session) => session.superseded || FINAL_DEVICE_RUN_STATES.has(session.state)),
          );
          if (run.state !== 'WAITING') expect(run.startTime).not.toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('may follow any state from any other', () => {
    const progress = {
      WAITING: { unfinished: true, started: false },
      RUNNING: { unfinished: true, started: true },
      FINISHED: { unfinished: false, started: true },
    } as const;
    const states: TestRunState[] = ['WAITING', 'RUNNING', 'FINISHED'];
    for (const from of states) {
      for (const to of states) {
        const update = runUpdate({ state: from, startTime: 5 }, progress[to], 9);
        if (from === to && to !== 'FINISHED') expect(update).toBeNull();
        else expect(update?.state).toBe(to);
      }
    }
  });
});
