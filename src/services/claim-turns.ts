/**
 * One claim of an agent at a time on a server. An agent hangs up on its claim and claims again
 * each time one of its devices frees, so its older claim is often still working on the server
 * when the newer arrives: both took and gave back the same devices' rows, each waiting on the
 * other's row locks (most of the claims' time in the fleet benchmark, docs/benchmarks.md). A newer
 * claim waits for the older's turn, and the older stops taking devices once a newer one waits:
 * what the older took reaches the agent through the newer (as undelivered work).
 */
export interface ClaimTurn {
  /** A newer claim of the same agent waits for this turn: leave the rest of the devices to it. */
  superseded(): boolean;
  release(): void;
}

export type ClaimTurns = ReturnType<typeof claimTurns>;

/** Turns of one server's claims (the agent protocol's routes hold one). */
export function claimTurns() {
  const queues = new Map<number, { tail: Promise<void>; taken: number }>();
  return {
    async take(agentId: number): Promise<ClaimTurn> {
      let queue = queues.get(agentId);
      if (queue === undefined) {
        queue = { tail: Promise.resolve(), taken: 0 };
        queues.set(agentId, queue);
      }
      const own = queue;
      const previous = own.tail;
      let release!: () => void;
      own.tail = new Promise<void>((resolve) => (release = resolve));
      own.taken += 1;
      const number = own.taken;
      await previous;
      return {
        superseded: () => own.taken > number,
        release() {
          release();
          if (own.taken === number && queues.get(agentId) === own) queues.delete(agentId);
        },
      };
    },
  };
}
