/**
 * Why a run waits (docs/api.md#the-queue): for each waiting device run, its device's condition and how many
 * device runs are ahead of it on that device. A run that stays pending usually means a device
 * problem (docs/api.md#the-queue), so the message names offline, cleaning and out-of-service devices rather
 * than leaving the user to guess.
 */
import type { Device } from '../domain/devices.ts';
import type { Store } from '../store/store.ts';

export interface QueueStatus {
  readonly message: string | null;
  /** 1 = next to start on its device, for the run's best-placed waiting device run. */
  readonly position: number | null;
}

export const NOT_QUEUED: QueueStatus = { message: null, position: null };

/** Runs that may have waiting device runs (a finished run has none). */
export function waitingIds(records: ReadonlyArray<{ run: { id: number; state: string } }>): number[] {
  return records.filter((record) => record.run.state !== 'FINISHED').map((record) => record.run.id);
}

export async function queueStatuses(store: Store, testRunIds: readonly number[]): Promise<Map<number, QueueStatus>> {
  const standings = await store.queue.standings(testRunIds);
  const statuses = new Map<number, QueueStatus>();
  if (standings.length === 0) return statuses;
  const devices = await store.devices.byIds(standings.map((standing) => standing.deviceId));
  const runOf = await store.deviceRuns.testRunIdsOf(standings.map((standing) => standing.deviceRunId));
  const byRun = new Map<number, Array<{ device: Device; ahead: number }>>();
  for (const standing of standings) {
    const runId = runOf.get(standing.deviceRunId)!;
    const list = byRun.get(runId) ?? [];
    list.push({ device: devices.get(standing.deviceId)!, ahead: standing.ahead });
    byRun.set(runId, list);
  }
  for (const [runId, waits] of byRun) {
    const reasons = waits.map(({ device, ahead }) => `${device.displayName}: ${deviceCondition(device, ahead)}`);
    const shown = reasons.slice(0, 5).join('; ') + (reasons.length > 5 ? `; and ${reasons.length - 5} more` : '');
    statuses.set(runId, {
      message: `Waiting for ${waits.length} device${waits.length === 1 ? '' : 's'} (${shown})`,
      position: Math.min(...waits.map(({ ahead }) => ahead + 1)),
    });
  }
  return statuses;
}

function deviceCondition(device: Device, ahead: number): string {
  const queue = ahead > 0 ? `, ${ahead} device run${ahead === 1 ? '' : 's'} ahead` : '';
  if (!device.enabled) return `disabled by an operator${queue}`;
  if (device.state === 'NOT_OPERATIONAL')
    return `not operational (${device.stateReason ?? 'taken out of service'}); an operator must bring it back${queue}`;
  if (!device.online) return `offline${queue}`;
  if (device.state === 'CLEANING') return `being cleaned${queue}`;
  if (device.state === 'TESTING') return `busy with another run${queue}`;
  return ahead > 0 ? `${ahead} device run${ahead === 1 ? '' : 's'} ahead` : 'starting shortly';
}
