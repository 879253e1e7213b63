import { describe, expect, it } from 'vitest';
import type { ApiDeviceGroup, ApiDeviceSession, ApiFramework } from '../../src/client/api-types.ts';
import { chooseFramework, chooseGroup, parseParams } from '../../src/cli/run-inputs.ts';
import { exitCodeOf, watchRun } from '../../src/cli/run-watch.ts';

const framework = (
  id: number,
  name: string,
  osType: 'ANDROID' | 'IOS',
  type: string,
  available = true,
): ApiFramework => ({
  id,
  name,
  osType,
  type,
  requiredAppExtensions: '',
  requiredTestExtensions: '',
  requiresSourceCode: false,
  available,
  unavailableReason: available ? null : 'gone',
});
const FRAMEWORKS = [
  framework(1, 'Android Instrumentation (Espresso)', 'ANDROID', 'INSTRUMENTATION'),
  framework(4, 'Appium Android server side', 'ANDROID', 'SERVER_SIDE'),
  framework(6, 'Android App Crawler', 'ANDROID', 'CRAWLER'),
  framework(17, 'Appium iOS server side', 'IOS', 'SERVER_SIDE'),
  framework(18, 'iOS Crawler', 'IOS', 'CRAWLER'),
  framework(19, 'iOS UI Automation', 'IOS', 'XCTEST', false),
];
const group = (id: number, displayName: string, osType: 'ANDROID' | 'IOS', deviceCount = 2): ApiDeviceGroup => ({
  id,
  displayName,
  osType,
  deviceCount,
  isPublic: false,
});

describe('devicecloud run inputs', () => {
  it('infers the framework from the files, or takes it by id or unique name', () => {
    expect(chooseFramework(FRAMEWORKS, 'ANDROID', { crawler: false, tests: 't.zip' }).id).toBe(4);
    expect(chooseFramework(FRAMEWORKS, 'ANDROID', { crawler: false, tests: 'app-test.apk' }).id).toBe(1);
    expect(chooseFramework(FRAMEWORKS, 'IOS', { crawler: true }).id).toBe(18);
    expect(chooseFramework(FRAMEWORKS, 'ANDROID', { crawler: false, framework: 'espresso' }).id).toBe(1);
    expect(chooseFramework(FRAMEWORKS, 'ANDROID', { crawler: false, framework: '6' }).id).toBe(6);
    expect(() => chooseFramework(FRAMEWORKS, 'ANDROID', { crawler: false, framework: '17' })).toThrow(
      /no ANDROID framework/,
    );
    expect(() => chooseFramework(FRAMEWORKS, 'IOS', { crawler: false, framework: '19' })).toThrow(
      /cannot be used: gone/,
    );
    expect(() => chooseFramework(FRAMEWORKS, 'ANDROID', { crawler: false })).toThrow(/Give --tests FILE, or --crawler/);
  });

  it('finds groups by id or name, and suggests the closest names for unknown ones', () => {
    const groups = [
      group(1, 'All Android devices', 'ANDROID'),
      group(2, 'All iOS devices', 'IOS'),
      group(3, 'Pixels', 'ANDROID'),
      group(4, 'Empty', 'ANDROID', 0),
    ];
    expect(chooseGroup(groups, 'ANDROID', 'pixels').id).toBe(3);
    expect(chooseGroup(groups, 'ANDROID', '1').id).toBe(1);
    expect(() => chooseGroup(groups, 'ANDROID', 'Pixel phones')).toThrow(
      "no ANDROID device group of that id or name; did you mean: 'Pixels', 'Empty', 'All Android devices'?",
    );
    expect(() => chooseGroup(groups, 'ANDROID', '2')).toThrow(/holds IOS devices, but the app is for ANDROID/);
    expect(() => chooseGroup(groups, 'ANDROID', 'Empty')).toThrow(/has no devices/);
  });

  it('parses KEY=VALUE parameters, values may hold =', () => {
    expect(parseParams(['A=1', 'URL=http://x/?a=b'])).toEqual([
      { key: 'A', value: '1' },
      { key: 'URL', value: 'http://x/?a=b' },
    ]);
    expect(() => parseParams(['=x'])).toThrow(/expected KEY=VALUE/);
  });

  it('maps outcomes to exit codes: failed tests 1 before infrastructure 2, all succeeded 0', () => {
    const session = (state: ApiDeviceSession['state'], failed = 0) =>
      ({ state, testCaseFailedCount: failed }) as ApiDeviceSession;
    expect(exitCodeOf([session('SUCCEEDED'), session('SUCCEEDED')])).toBe(0);
    expect(exitCodeOf([session('SUCCEEDED'), session('EXCLUDED')])).toBe(0);
    expect(exitCodeOf([session('FAILED', 1), session('WARNING')])).toBe(1);
    expect(exitCodeOf([session('TIMEOUT', 1)])).toBe(1);
    expect(exitCodeOf([session('SUCCEEDED'), session('TIMEOUT')])).toBe(2);
    expect(exitCodeOf([session('ABORTED')])).toBe(2);
    expect(exitCodeOf([session('EXCLUDED')])).toBe(2);
  });
});

describe('following a run', () => {
  const device = (displayName: string) => ({ id: 1, displayName }) as ApiDeviceSession['device'];
  const session = (id: number, state: ApiDeviceSession['state'], passed = 0) =>
    ({
      id,
      device: device(`Phone ${id}`),
      state,
      excludeReason: null,
      testCaseAllCount: passed,
      testCasePassedCount: passed,
      testCaseFailedCount: 0,
    }) as unknown as ApiDeviceSession;
  /** A client that answers the polls from a script of states. */
  const scripted = (
    polls: ReadonlyArray<{ state: string; sessions: ApiDeviceSession[]; steps: Record<number, string> }>,
  ) => {
    let at = -1;
    return {
      run: async () => ({ id: 7, state: polls[Math.min(++at, polls.length - 1)]!.state, message: null }),
      deviceSessions: async () => polls[Math.min(at, polls.length - 1)]!.sessions,
      currentSteps: async () =>
        new Map(Object.entries(polls[Math.min(at, polls.length - 1)]!.steps).map(([id, step]) => [Number(id), step])),
    } as never;
  };
  type Poll = { state: string; sessions: ApiDeviceSession[]; steps: Record<number, string> };
  const polls: Poll[] = [
    { state: 'RUNNING', sessions: [session(1, 'RUNNING'), session(2, 'WAITING')], steps: { 1: 'INSTALL' } },
    { state: 'RUNNING', sessions: [session(1, 'RUNNING'), session(2, 'WAITING')], steps: { 1: 'INSTALL' } },
    { state: 'FINISHED', sessions: [session(1, 'SUCCEEDED', 3), session(2, 'SUCCEEDED', 3)], steps: {} },
  ];
  const capture = (isTTY: boolean) => {
    const written: string[] = [];
    return {
      written,
      out: { isTTY, columns: 80, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream,
    };
  };

  it('prints one line per change when the output is a log', async () => {
    const { written, out } = capture(false);
    const finished = await watchRun(scripted(polls), 7, { pollMs: 1, out, signal: new AbortController().signal });
    expect(finished?.sessions.map((s) => s.state)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(written.map((line) => line.replace(/^\[[\d:]+\] /, ''))).toEqual([
      'Phone 1: RUNNING (INSTALL)\n',
      'Phone 2: WAITING\n',
      'Phone 1: SUCCEEDED, 3 passed, 0 failed\n',
      'Phone 2: SUCCEEDED, 3 passed, 0 failed\n',
    ]);
  });

  it('redraws one block in place on a terminal', async () => {
    const { written, out } = capture(true);
    await watchRun(scripted(polls), 7, { pollMs: 1, out, signal: new AbortController().signal });
    const text = written.join('');
    expect(text.match(/\x1b\[3A/g)).toHaveLength(2); // moved back up over the 3-line block before each redraw
    expect(text).toContain('\x1b[2KRun 7 FINISHED\n\x1b[2KPhone 1: SUCCEEDED, 3 passed, 0 failed\n');
  });
});
