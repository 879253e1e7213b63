/** What every use case receives: the store and a clock (injectable, so tests can move time). */
import type { Store } from '../store/store.ts';

export type Clock = () => number;

export interface Context {
  readonly store: Store;
  readonly clock: Clock;
}
