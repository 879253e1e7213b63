import type { UserFile } from '../../domain/files.ts';
import type { StoredSample } from '../../domain/runs.ts';
import type { StoredTestCase } from '../../domain/test-cases.ts';
import { PLAIN_ARRAY } from '../encode/json.ts';
import { type PresentContext, userPath } from './context.ts';
import { type Rep, rep, repList } from './representation.ts';

export function presentTestCaseRun(testCase: StoredTestCase): Rep {
  return rep('apiTestCaseRun', {
    id: testCase.id,
    deviceSessionId: testCase.deviceRunId,
    suiteName: testCase.suiteName,
    className: testCase.className,
    methodName: testCase.methodName,
    duration: testCase.duration,
    result: testCase.result,
    errorMessage: testCase.errorMessage,
    stacktrace: testCase.stacktrace,
  });
}

/** A plain JSON array, not an envelope (docs/api.md#device-runs-and-device-sessions). */
export function presentSamples(samples: readonly StoredSample[]): Rep {
  return repList(
    PLAIN_ARRAY,
    samples.map((sample) =>
      rep('apiDeviceRunPerformance', {
        timestamp: sample.timestamp,
        cpuUsage: sample.cpuUsage,
        memUsage: sample.memUsage,
        packageName: sample.packageName,
      }),
    ),
  );
}

export function presentScreenshot(file: UserFile, context: PresentContext): Rep {
  return rep('apiScreenshot', {
    id: file.id,
    selfURI: `${userPath(context)}/device-sessions/${file.deviceRunId}/screenshots/${file.id}`,
    originalName: file.name,
    createTime: file.createTime,
    size: file.size,
  });
}
