/**
 * A run's secrets (domain/run-settings.ts RunSecrets) at rest: sealed with the key ring of API
 * keys, authenticated with the run's id, in a table of their own that only the agent's assignment
 * reads. No presenter sees them, so no answer can carry them.
 */
import { type RunSecrets, formatRunSecrets, readRunSecrets } from '../domain/run-settings.ts';
import type { Store } from '../store/store.ts';
import { type KeyRing, open, runSecretsAssociatedData, seal } from './secret-box.ts';

export async function keepRunSecrets(
  store: Store,
  keyRing: KeyRing,
  testRunId: number,
  secrets: RunSecrets,
): Promise<void> {
  await store.testRuns.insertSecrets(
    testRunId,
    seal(keyRing.current(), formatRunSecrets(secrets), runSecretsAssociatedData(testRunId)),
  );
}

/** The run's secrets, or null when it has none. */
export async function runSecretsOf(store: Store, keyRing: KeyRing, testRunId: number): Promise<RunSecrets | null> {
  const stored = await store.testRuns.secretsOf(testRunId);
  if (stored === undefined) return null;
  if ('inline' in stored) return stored.inline;
  return readRunSecrets(
    open(keyRing, stored.sealed, runSecretsAssociatedData(testRunId)),
    `The secrets of test run ${testRunId}`,
  );
}
