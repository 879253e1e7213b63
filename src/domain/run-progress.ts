/**
 * How far a run and its device sessions have come, read from what the sessions recorded
 * (docs/api.md#steps-and-data-availability): the run's steps, summed up from its current sessions'
 * step timelines, a session's current step, and which kinds of results each session has.
 */
import { type DeviceRun, STEP_TYPES, type Step, type StepType, isFinal } from './runs.ts';

/** One step type across the run's current device sessions. */
export interface RunStep {
  readonly type: StepType;
  /** When the first session entered it. */
  readonly startTime: number;
  /** When the last one left it; null while a session is in it, or could still enter it. */
  readonly finishTime: number | null;
  /** The first reason a session gave there (an artifact not kept, a failure), or null. */
  readonly failReason: string | null;
  /** Sessions that entered it. */
  readonly deviceSessionCount: number;
  /** Sessions that entered it and left it. */
  readonly finishedDeviceSessionCount: number;
}

const ORDER = new Map<StepType, number>(STEP_TYPES.map((type, index) => [type, index]));

/**
 * The run's steps in timeline order (STEP_TYPES), each step type that at least one of `sessions`
 * entered. A step is finished once no session is in it and no unfinished session can still reach
 * it (one that has not yet got that far); a session that ended before it (aborted, excluded) does
 * not hold it open.
 */
export function runSteps(sessions: readonly Pick<DeviceRun, 'id' | 'state'>[], steps: readonly Step[]): RunStep[] {
  const bySession = new Map<number, Step[]>();
  for (const step of steps) bySession.set(step.deviceRunId, [...(bySession.get(step.deviceRunId) ?? []), step]);
  const furthest = new Map<number, number>();
  for (const session of sessions) {
    const reached = (bySession.get(session.id) ?? []).map((step) => ORDER.get(step.type)!);
    furthest.set(session.id, reached.length === 0 ? -1 : Math.max(...reached));
  }
  const result: RunStep[] = [];
  for (const type of STEP_TYPES) {
    const position = ORDER.get(type)!;
    const ofType = sessions.flatMap((session) =>
      (bySession.get(session.id) ?? []).filter((step) => step.type === type).map((step) => ({ session, step })),
    );
    if (ofType.length === 0) continue;
    const entered = new Set(ofType.map(({ session }) => session.id));
    const open = new Set(ofType.filter(({ step }) => step.finishTime === null).map(({ session }) => session.id));
    const stillToCome = sessions.some(
      (session) => !entered.has(session.id) && !isFinal(session.state) && furthest.get(session.id)! < position,
    );
    const byStart = [...ofType].sort((a, b) => a.step.startTime - b.step.startTime || a.step.id - b.step.id);
    result.push({
      type,
      startTime: byStart[0]!.step.startTime,
      finishTime:
        open.size > 0 || stillToCome ? null : Math.max(...ofType.map(({ step }) => step.finishTime ?? step.startTime)),
      failReason: byStart.find(({ step }) => step.failReason !== null)?.step.failReason ?? null,
      deviceSessionCount: entered.size,
      finishedDeviceSessionCount: entered.size - open.size,
    });
  }
  return result;
}

/** A session's current step: the one it is in, or, once it has ended, the last it was in; null before any. */
export function currentStep(steps: readonly Step[]): Step | null {
  return steps.find((step) => step.finishTime === null) ?? steps.at(-1) ?? null;
}

/** Which results a device session has, by kind. */
export interface DataAvailability {
  readonly deviceRunId: number;
  readonly logs: boolean;
  readonly performance: boolean;
  readonly screenshots: boolean;
  readonly video: boolean;
  /** Packages run as uploaded: nothing is built, so there are never build logs. */
  readonly buildLogs: false;
  /** Its `result-data.zip` holds something: an output file, or performance samples. */
  readonly resultsDataZip: boolean;
}

/**
 * From the tags of the session's output files (undefined: it has none; an empty set: files
 * without tags) and whether it reported performance samples.
 */
export function dataAvailability(
  deviceRunId: number,
  outputTags: ReadonlySet<string> | undefined,
  sampled: boolean,
): DataAvailability {
  const has = (tag: string) => outputTags?.has(tag) === true;
  return {
    deviceRunId,
    logs: has('logs'),
    performance: sampled || has('performance'),
    screenshots: has('screenshot'),
    video: has('video'),
    buildLogs: false,
    resultsDataZip: sampled || outputTags !== undefined,
  };
}
