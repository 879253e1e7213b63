/**
 * A state machine as data: each event names the states it may start from and the states it may
 * lead to. Every writer of a state asks the machine for the target, and the store's conditional
 * UPDATEs take their `WHERE state IN (...)` from `from(event)`, so that the code, the SQL and the
 * table cannot disagree. A record whose state the event does not start from is left as it is.
 */
import { IllegalTransitionError } from './errors.ts';

export interface Transition<S extends string> {
  readonly from: readonly S[];
  /** The first is the event's usual target; an event with several lets the caller choose (an outcome). */
  readonly to: readonly [S, ...S[]];
}

export type TransitionTable<S extends string, E extends string> = { readonly [event in E]: Transition<S> };

export interface StateMachine<S extends string, E extends string> {
  /** What the errors call the record (device, device run). */
  readonly name: string;
  readonly states: readonly S[];
  /** The states a record is created in. */
  readonly initial: readonly S[];
  readonly events: TransitionTable<S, E>;
  /** The states `event` starts from: what a conditional UPDATE of the store requires. */
  from(event: E): readonly S[];
  /** The state `event` leads to: `to` when the table allows it, else the event's usual target. */
  target(event: E, to?: S): S;
  can(from: S, event: E): boolean;
  /** The state after `event` from `from`; IllegalTransitionError when the table has no such transition. */
  next(from: S, event: E, to?: S): S;
  /** Every state `from` may move to, by any event. */
  successors(from: S): readonly S[];
  /** States no event leaves. */
  readonly final: readonly S[];
}

export function stateMachine<S extends string, E extends string>(spec: {
  readonly name: string;
  readonly states: readonly S[];
  readonly initial: readonly S[];
  readonly events: TransitionTable<S, E>;
}): StateMachine<S, E> {
  const { name, states, initial, events } = spec;
  const successors = new Map<S, readonly S[]>(
    states.map((state) => [
      state,
      states.filter((to) =>
        Object.values<Transition<S>>(events).some((t) => t.from.includes(state) && t.to.includes(to)),
      ),
    ]),
  );
  const target = (event: E, to?: S): S => {
    const transition = events[event];
    if (to === undefined) return transition.to[0];
    if (!transition.to.includes(to)) throw new IllegalTransitionError(name, null, event, to);
    return to;
  };
  return {
    name,
    states,
    initial,
    events,
    from: (event) => events[event].from,
    target,
    can: (from, event) => events[event].from.includes(from),
    next(from, event, to) {
      const state = target(event, to);
      if (!events[event].from.includes(from)) throw new IllegalTransitionError(name, from, event, state);
      return state;
    },
    successors: (from) => successors.get(from) ?? [],
    final: states.filter((state) => successors.get(state)?.length === 0),
  };
}
