import { describe, expect, it } from 'vitest';
import { claimTurns } from '../../src/services/claim-turns.ts';

describe('claim turns', () => {
  it('runs one claim of an agent at a time, tells the older one a newer waits, and keeps agents apart', async () => {
    const turns = claimTurns();
    const older = await turns.take(1);
    expect(older.superseded()).toBe(false);
    let newerStarted = false;
    const newer = turns.take(1).then((turn) => {
      newerStarted = true;
      return turn;
    });
    // Another agent's claim does not wait for agent 1's.
    const other = await turns.take(2);
    expect(other.superseded()).toBe(false);
    other.release();
    await Promise.resolve();
    expect(newerStarted).toBe(false);
    expect(older.superseded()).toBe(true);
    older.release();
    const turn = await newer;
    expect(newerStarted).toBe(true);
    expect(turn.superseded()).toBe(false);
    turn.release();
    // Released in full: a later claim starts at once.
    const later = await turns.take(1);
    expect(later.superseded()).toBe(false);
    later.release();
  });
});
