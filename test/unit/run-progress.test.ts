/**
 * A run's steps summed up from its sessions' timelines, a session's current step and which results
 * it has (domain/run-progress.ts), and the rules for renaming runs and files (domain/edits.ts).
 */
import { describe, expect, it } from 'vitest';
import { checkFileName, checkRunChanges } from '../../src/domain/edits.ts';
import { InvalidParameterError } from '../../src/domain/errors.ts';
import { currentStep, dataAvailability, runSteps } from '../../src/domain/run-progress.ts';
import type { DeviceRunState, Step, StepType } from '../../src/domain/runs.ts';

let nextId = 1;
function step(deviceRunId: number, type: StepType, startTime: number, finishTime: number | null, failReason?: string) {
  return { id: nextId++, deviceRunId, type, startTime, finishTime, failReason: failReason ?? null } satisfies Step;
}
const session = (id: number, state: DeviceRunState) => ({ id, state });
const summary = (steps: ReturnType<typeof runSteps>) =>
  steps.map((s) => [s.type, s.startTime, s.finishTime, s.deviceSessionCount, s.finishedDeviceSessionCount]);

describe('runSteps', () => {
  it('lists only the step types some session entered, in timeline order', () => {
    const steps = [
      step(1, 'RUNNING', 30, 40),
      step(1, 'WAITING', 0, 10),
      step(1, 'PREPARING', 10, 20),
      step(1, 'INSTALL', 20, 30),
      step(1, 'SENDING_RESULTS', 40, 50),
    ];
    expect(summary(runSteps([session(1, 'SUCCEEDED')], steps))).toEqual([
      ['WAITING', 0, 10, 1, 1],
      ['PREPARING', 10, 20, 1, 1],
      ['INSTALL', 20, 30, 1, 1],
      ['RUNNING', 30, 40, 1, 1],
      ['SENDING_RESULTS', 40, 50, 1, 1],
    ]);
    expect(runSteps([], [])).toEqual([]);
  });

  it('keeps a step open while a session is in it, or an unfinished one may still reach it', () => {
    const sessions = [session(1, 'RUNNING'), session(2, 'WAITING'), session(3, 'ABORTED')];
    const steps = [
      step(1, 'WAITING', 0, 5),
      step(1, 'PREPARING', 5, 8),
      step(1, 'RUNNING', 8, null),
      step(2, 'WAITING', 0, null),
      step(3, 'WAITING', 0, 3),
    ];
    expect(summary(runSteps(sessions, steps))).toEqual([
      ['WAITING', 0, null, 3, 2],
      ['PREPARING', 5, null, 1, 1],
      ['RUNNING', 8, null, 1, 0],
    ]);
  });

  it('closes a step that sessions ended before, and one that a session past it skipped', () => {
    // Session 2 went from PREPARING straight to RUNNING: it will never UNINSTALL or INSTALL.
    const sessions = [session(1, 'FINISHING'), session(2, 'RUNNING'), session(3, 'FAILED')];
    const steps = [
      step(1, 'PREPARING', 0, 2),
      step(1, 'INSTALL', 2, 4),
      step(1, 'RUNNING', 4, 9),
      step(1, 'SENDING_RESULTS', 9, null),
      step(2, 'PREPARING', 1, 3),
      step(2, 'RUNNING', 3, null),
      step(3, 'PREPARING', 1, 2, 'no device'),
    ];
    expect(summary(runSteps(sessions, steps))).toEqual([
      ['PREPARING', 0, 3, 3, 3],
      ['INSTALL', 2, 4, 1, 1],
      ['RUNNING', 3, null, 2, 1],
      ['SENDING_RESULTS', 9, null, 1, 0],
    ]);
    expect(runSteps(sessions, steps)[0]!.failReason).toBe('no device');
  });

  it('takes the first reason given in a step, by time, and ignores steps of other sessions', () => {
    const steps = [
      step(1, 'RUNNING', 20, 30, 'later'),
      step(2, 'RUNNING', 10, 15, 'earlier'),
      step(9, 'RUNNING', 0, 1, 'not this run'),
    ];
    const [running] = runSteps([session(1, 'FAILED'), session(2, 'FAILED')], steps);
    expect(running).toMatchObject({ failReason: 'earlier', startTime: 10, finishTime: 30, deviceSessionCount: 2 });
  });
});

describe('currentStep', () => {
  it('is the open step, else the last one, else none', () => {
    const open = [step(1, 'WAITING', 0, 1), step(1, 'RUNNING', 1, null)];
    expect(currentStep(open)?.type).toBe('RUNNING');
    const ended = [step(1, 'WAITING', 0, 1), step(1, 'PROCESSING_RESULTS', 1, 2)];
    expect(currentStep(ended)?.type).toBe('PROCESSING_RESULTS');
    expect(currentStep([])).toBeNull();
  });
});

describe('dataAvailability', () => {
  it('reads each kind from the output tags and the samples', () => {
    expect(dataAvailability(7, undefined, false)).toEqual({
      deviceRunId: 7,
      logs: false,
      performance: false,
      screenshots: false,
      video: false,
      buildLogs: false,
      resultsDataZip: false,
    });
    expect(dataAvailability(7, new Set(['logs', 'screenshot', 'video']), false)).toMatchObject({
      logs: true,
      screenshots: true,
      video: true,
      performance: false,
      resultsDataZip: true,
    });
    expect(dataAvailability(7, undefined, true)).toMatchObject({ performance: true, resultsDataZip: true });
    expect(dataAvailability(7, new Set(['performance']), false)).toMatchObject({ performance: true });
    // Files without tags are results too.
    expect(dataAvailability(7, new Set(), false)).toMatchObject({ logs: false, resultsDataZip: true });
  });
});

describe('renames', () => {
  const refusal = (action: () => unknown) => {
    try {
      action();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidParameterError);
      return { parameter: (error as InvalidParameterError).parameter, message: (error as Error).message };
    }
    throw new Error('not refused');
  };

  it('takes displayName or name for a run, trimmed; empty is the default name', () => {
    expect(checkRunChanges({})).toEqual({});
    expect(checkRunChanges({ displayName: ' Nightly ' })).toEqual({ name: 'Nightly' });
    expect(checkRunChanges({ name: 'Nightly' })).toEqual({ name: 'Nightly' });
    expect(checkRunChanges({ displayName: 'Same', name: ' Same' })).toEqual({ name: 'Same' });
    expect(checkRunChanges({ displayName: '' })).toEqual({ name: null });
    expect(refusal(() => checkRunChanges({ displayName: 'A', name: 'B' })).parameter).toBe('displayName');
    expect(refusal(() => checkRunChanges({ name: 'x'.repeat(256) })).parameter).toBe('name');
    expect(refusal(() => checkRunChanges({ displayName: 'a\u0000b' })).parameter).toBe('displayName');
  });

  it("keeps a file's extension, whatever its case, and refuses what an upload's name would change", () => {
    expect(checkFileName(' release.APK ', 'app.apk')).toBe('release.APK');
    expect(checkFileName('b.tar.gz', 'a.tar.gz')).toBe('b.tar.gz');
    expect(checkFileName('GNUmakefile', 'Makefile')).toBe('GNUmakefile');
    expect(checkFileName('.profile', '.env')).toBe('.profile');
    for (const [name, current, message] of [
      ['app.zip', 'app.apk', "extension '.apk'"],
      ['app', 'app.apk', "extension '.apk'"],
      ['a.tar', 'a.tar.gz', "extension '.gz'"],
      ['Makefile.txt', 'Makefile', 'without an extension'],
      ['dir/app.apk', 'app.apk', 'plain file name'],
      ['..\\app.apk', 'app.apk', 'plain file name'],
      ['"app".apk', 'app.apk', 'plain file name'],
      ['..', 'file', 'plain file name'],
      ['  ', 'app.apk', 'must not be empty'],
    ] as const) {
      const refused = refusal(() => checkFileName(name, current));
      expect(refused.parameter, name).toBe('name');
      expect(refused.message, name).toContain(message);
    }
    expect(refusal(() => checkFileName(undefined, 'app.apk')).message).toContain('required');
  });
});
