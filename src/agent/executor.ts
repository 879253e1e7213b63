/**
 * Executes one device run on one device, around the driver: puts the inputs in place (from the
 * checked cache), enforces the timeout, forwards steps and samples to the server in batches,
 * decides the outcome (test failures, infrastructure failures and the customer's faults kept
 * apart), uploads artifacts, reports the result. Partial results of an aborted or timed-out run
 * are still parsed and sent; results too large for the protocol are cut, never dropped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_IDLE_SECONDS, IDLE_PARAMETER } from '../domain/interactive.ts';
import { FAIL_REASON_CHARS, type StepType } from '../domain/runs.ts';
import { type TestCase, cutText, fitTestCasesInto } from '../domain/test-cases.ts';
import { DEFAULT_ZIP_LIMITS, type ZipLimits } from '../domain/zip-limits.ts';
import { ZipError, extractZip } from '../files/zip.ts';
import { type Assignment, type ProgressReport, REPORT_BODY_LIMIT_BYTES, type ResultReport } from '../protocol/v1.ts';
import { parseJUnit } from '../results/junit.ts';
import { ProtocolError, type ProtocolClient, type RetryPolicy } from './client.ts';
import {
  type Artifact,
  CustomerFault,
  type Driver,
  type ExecutionResult,
  type Job,
  type LocalFile,
  type PerformanceSample,
  type Recording,
} from './driver.ts';
import type { InputCache } from './input-cache.ts';
import { serveSession } from './webdriver-relay.ts';
import { serveInteractive } from './interactive-relay.ts';

export interface ExecutorDeps {
  readonly client: ProtocolClient;
  readonly driver: Driver;
  /** Holds `work/` (one folder per device run). */
  readonly dataDir: string;
  /** Inputs by checksum, checked at every use. */
  readonly cache: InputCache;
  /** What an input zip may expand to, counted while unpacking (the settings'). */
  readonly zipLimits?: ZipLimits;
  readonly log: (message: string) => void;
  /** How long reports keep being retried while the server is unreachable. */
  readonly reportPatienceMs: number;
}

export interface Execution {
  /** Stops the run; `reason` decides the outcome (a user abort, or the agent shutting down). */
  stop(reason: 'aborted' | 'shutdown'): void;
  /** Resolves once reported; `checkDevice`: the server wants the device checked before it takes work again. */
  readonly done: Promise<{ readonly checkDevice: boolean }>;
}

/** JUnit files larger than this are not read (the agent would spend its memory on one run's output). */
export const JUNIT_MAX_BYTES = 128 * 1024 * 1024;
/** Room left in a result message for what is not test cases (steps, samples, the fail reason). */
const REPORT_OVERHEAD_BYTES = 2 * 1024 * 1024;

const FLUSH_MS = 1000;

export function execute(deps: ExecutorDeps, serial: string, assignment: Assignment): Execution {
  const controller = new AbortController();
  let stopReason: 'aborted' | 'shutdown' | 'timeout' | null = null;
  const stop = (reason: 'aborted' | 'shutdown' | 'timeout') => {
    stopReason ??= reason;
    controller.abort();
  };
  const done = run(deps, serial, assignment, controller.signal, () => stopReason, stop);
  return { stop, done };
}

async function run(
  deps: ExecutorDeps,
  serial: string,
  assignment: Assignment,
  signal: AbortSignal,
  stopReason: () => 'aborted' | 'shutdown' | 'timeout' | null,
  stop: (reason: 'aborted' | 'timeout') => void,
): Promise<{ checkDevice: boolean }> {
  const { client, driver } = deps;
  const id = assignment.deviceRunId;
  const policy: RetryPolicy = { maxElapsedMs: deps.reportPatienceMs };
  const workDir = path.join(deps.dataDir, 'work', String(id));
  await fs.promises.rm(workDir, { recursive: true, force: true });
  await fs.promises.mkdir(path.join(workDir, 'inputs'), { recursive: true });

  let seq = 0;
  const steps: ProgressReport['steps'] = [];
  const samples: PerformanceSample[] = [];
  const send = async () => {
    if (steps.length === 0 && samples.length === 0) return;
    const report: ProgressReport = { seq: ++seq, steps: steps.splice(0), samples: samples.splice(0) };
    try {
      const answer = await client.progress(id, report, policy);
      if (answer.abort) stop('aborted');
    } catch (error) {
      deps.log(`device run ${id}: progress report failed: ${(error as Error).message}`);
    }
  };
  // One report at a time: the server drops a report older than one it applied, so two in flight
  // could lose the first one's samples.
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => (flushing = flushing.then(send));
  const flusher = setInterval(() => void flush(), FLUSH_MS);
  const timer = setTimeout(() => stop('timeout'), assignment.timeoutSeconds * 1000);
  const step = (type: StepType) =>
    steps.push({ type: type as ProgressReport['steps'][number]['type'], time: Date.now() });

  // Started before the first step and stopped after the last: the video covers the whole session.
  const recording =
    assignment.video === true ? await startRecording(driver, serial, path.join(workDir, 'video')) : null;
  let result: ExecutionResult;
  try {
    const inputs = await download(deps, assignment, workDir, policy);
    const job: Job = {
      deviceRunId: id,
      serial,
      kind: assignment.kind,
      app: inputs.find((input) => input.action === 'INSTALL')?.file ?? null,
      tests: inputs.find((input) => input.action === 'RUN_TEST')?.file ?? null,
      data: inputs.filter((input) => input.action === 'COPY_TO_DEVICE').map((input) => input.file),
      timeoutSeconds: assignment.timeoutSeconds,
      parameters: assignment.parameters,
      locale: assignment.locale,
      deviceSettings: assignment.deviceSettings,
      launchApp: assignment.launchApp,
      credentials: assignment.credentials,
      workDir: path.join(workDir, 'run'),
    };
    await fs.promises.mkdir(job.workDir, { recursive: true });
    result = await driver.execute(job, {
      signal,
      step,
      sample: (sample) => samples.push(sample),
      ...(assignment.kind === 'appium-client' && {
        webdriver: {
          serve: (handle) =>
            serveSession(
              { client, deviceRunId: id, signal, dir: job.workDir, log: deps.log, patienceMs: deps.reportPatienceMs },
              handle,
            ),
        },
      }),
      ...(assignment.kind === 'interactive' && {
        interactive: {
          serve: (device) =>
            serveInteractive(
              {
                client,
                deviceRunId: id,
                signal,
                dir: job.workDir,
                log: deps.log,
                patienceMs: deps.reportPatienceMs,
                idleMs: (Number(assignment.parameters[IDLE_PARAMETER]) || DEFAULT_IDLE_SECONDS) * 1000,
              },
              device,
            ),
        },
      }),
      unzip: async (zipPath, destDir) => {
        try {
          await extractZip(zipPath, destDir, deps.zipLimits ?? DEFAULT_ZIP_LIMITS);
        } catch (error) {
          // What the zip is (or lies about) is the package's fault; a full disk is not.
          throw error instanceof ZipError ? new CustomerFault(error.message) : error;
        }
      },
    });
  } catch (error) {
    const outcome = error instanceof CustomerFault ? 'CUSTOMER_FAULT' : 'INFRA_ERROR';
    result = { outcome, failReason: (error as Error).message, testCases: null, exitCode: null, artifacts: [] };
  } finally {
    clearTimeout(timer);
  }
  // ffmpeg finishes the video (encodes what it holds, writes the index first) while the other
  // results go up: on a busy host that wait was the longest part of a short session's end. The
  // result still waits for the video's upload, so the session ends with its video (docs/api.md#videos).
  const video = recording === null ? Promise.resolve(null) : finishVideo(deps, id, recording);

  step('SENDING_RESULTS');
  const testCases = collectTestCases(result);
  const report = fitReport(decide(result, testCases, stopReason()));
  // The artifacts go up a few at a time. The steps not reported yet go with the result, a request
  // and a transaction fewer; uploads that take longer than a report's interval still show
  // SENDING_RESULTS meanwhile, as the flusher goes on until they end.
  await Promise.all([
    uploadAll(deps, id, result.artifacts, policy),
    video.then((artifact) => (artifact === null ? undefined : upload(deps, id, artifact, policy))),
  ]);
  clearInterval(flusher);
  step('PROCESSING_RESULTS');
  await flushing;
  let checkDevice = false;
  try {
    checkDevice =
      (
        await sendResult(
          deps,
          id,
          { seq: ++seq, ...report, steps: steps.splice(0), samples: samples.splice(0) },
          policy,
        )
      ).checkDevice === true;
    deps.log(`device run ${id} on ${serial}: ${report.outcome}${report.failReason ? ` (${report.failReason})` : ''}`);
  } catch (error) {
    deps.log(`device run ${id}: the result could not be reported: ${(error as Error).message}`);
  }
  await fs.promises.rm(workDir, { recursive: true, force: true });
  await deps.cache.sweep().catch((error: Error) => deps.log(`input cache: ${error.message}`));
  return { checkDevice };
}

/**
 * A result the server refuses as invalid (400, 413) is not the device's failure: it is sent again
 * without its test cases, with the server's reason (and FAILED where it said SUCCEEDED), rather
 * than dropped, which would end the device run by its lease, counted against the device.
 */
async function sendResult(deps: ExecutorDeps, id: number, report: ResultReport, policy: RetryPolicy) {
  try {
    return await deps.client.result(id, report, policy);
  } catch (error) {
    if (!(error instanceof ProtocolError) || (error.status !== 400 && error.status !== 413)) throw error;
    deps.log(`device run ${id}: the server refused the result (${error.message}); reporting it without test cases`);
    const failReason = cutText(
      [report.failReason, `the results could not be reported: ${error.message}`]
        .filter((part) => part !== null)
        .join('; '),
      FAIL_REASON_CHARS,
    );
    const outcome = report.outcome === 'SUCCEEDED' ? 'FAILED' : report.outcome;
    return deps.client.result(
      id,
      { seq: report.seq + 1, outcome, failReason, testCases: [], ...(report.refused === true && { refused: true }) },
      policy,
    );
  }
}

/** Test cases within the protocol's limits, cut with markers; the note joins the fail reason. */
function fitReport(report: Omit<ResultReport, 'seq'>): Omit<ResultReport, 'seq'> {
  const fitted = fitTestCasesInto(report.testCases, REPORT_BODY_LIMIT_BYTES - REPORT_OVERHEAD_BYTES);
  const failReason = [report.failReason, fitted.note].filter((part) => part !== null).join('; ');
  return {
    ...report,
    testCases: fitted.cases,
    failReason: failReason === '' ? null : cutText(failReason, FAIL_REASON_CHARS),
  };
}

interface Input {
  readonly action: Assignment['files'][number]['action'];
  readonly file: LocalFile;
}

/** Each input in the run's own folder: a copy checked against its checksum (input-cache.ts). */
async function download(
  deps: ExecutorDeps,
  assignment: Assignment,
  workDir: string,
  policy: RetryPolicy,
): Promise<Input[]> {
  return Promise.all(
    assignment.files.map(async (file): Promise<Input> => {
      const local = path.join(workDir, 'inputs', `${file.id}-${path.basename(file.name)}`);
      await deps.cache.provide(file, local, (target) => deps.client.download(file.url, target, policy));
      return { action: file.action, file: { path: local, name: file.name, properties: file.properties } };
    }),
  );
}

/** Test cases the driver knew, else those of its JUnit files; unreadable JUnit is reported, not fatal. */
function collectTestCases(result: ExecutionResult): { cases: TestCase[]; problem: string | null } {
  if (result.testCases !== null) return { cases: [...result.testCases], problem: null };
  const cases: TestCase[] = [];
  const problems: string[] = [];
  for (const artifact of result.artifacts.filter((candidate) => candidate.kind === 'junit')) {
    try {
      const size = fs.statSync(artifact.path).size;
      if (size > JUNIT_MAX_BYTES) throw new Error(`${size} bytes, more than the ${JUNIT_MAX_BYTES} read`);
      cases.push(...parseJUnit(fs.readFileSync(artifact.path, 'utf8')));
    } catch (error) {
      problems.push(`${artifact.name}: ${(error as Error).message}`);
    }
  }
  return { cases, problem: problems.length > 0 ? `unreadable JUnit results (${problems.join('; ')})` : null };
}

/**
 * The outcome: ABORTED or TIMEOUT when stopped; WARNING for infrastructure failures (and for a
 * shutdown of the agent, which is retryable) and for what the device refused (marked so, which is
 * not); FAILED, marked the same way, for what the customer's package or output caused; otherwise
 * the tests decide.
 */
export function decide(
  result: ExecutionResult,
  collected: { cases: TestCase[]; problem: string | null },
  stopReason: 'aborted' | 'shutdown' | 'timeout' | null,
): Omit<ResultReport, 'seq'> {
  const testCases = collected.cases;
  const outcome = (outcome: ResultReport['outcome'], failReason: string | null) => ({ outcome, failReason, testCases });
  if (stopReason === 'aborted') return outcome('ABORTED', 'aborted by the user');
  if (stopReason === 'timeout')
    return outcome('TIMEOUT', 'the tests did not finish within the timeout; partial results kept');
  if (stopReason === 'shutdown') return outcome('WARNING', 'the agent shut down while the device run was in progress');
  if (result.outcome === 'REFUSED')
    return { ...outcome('WARNING', result.failReason ?? 'the device cannot do what the run asked'), refused: true };
  if (result.outcome === 'CUSTOMER_FAULT')
    return { ...outcome('FAILED', result.failReason ?? 'the test package made the device run fail'), refused: true };
  if (result.outcome !== 'COMPLETED')
    return outcome('WARNING', result.failReason ?? 'the device run could not be completed');
  if (testCases.some((testCase) => testCase.result === 'FAILED')) return outcome('FAILED', collected.problem);
  if (collected.problem !== null) return outcome('FAILED', collected.problem);
  if (testCases.length === 0) {
    const exit = result.exitCode !== null && result.exitCode !== 0 ? `exited with code ${result.exitCode} and ` : '';
    return outcome(
      'FAILED',
      result.failReason ?? `the tests ${exit}reported no results (write JUnit XML into $OUTPUT_DIR)`,
    );
  }
  if (result.exitCode !== null && result.exitCode !== 0)
    return outcome('FAILED', `the tests passed but run-tests.sh exited with code ${result.exitCode}`);
  return outcome('SUCCEEDED', null);
}

const PARALLEL_UPLOADS = 4;

async function uploadAll(
  deps: ExecutorDeps,
  deviceRunId: number,
  artifacts: readonly Artifact[],
  policy: RetryPolicy,
): Promise<void> {
  const queue = [...artifacts];
  const worker = async () => {
    for (let artifact = queue.shift(); artifact !== undefined; artifact = queue.shift())
      await upload(deps, deviceRunId, artifact, policy);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_UPLOADS, queue.length) }, worker));
}

async function startRecording(driver: Driver, serial: string, dir: string): Promise<Recording> {
  try {
    await fs.promises.mkdir(dir, { recursive: true });
    return await driver.record(serial, dir);
  } catch (error) {
    return { stop: async () => ({ file: null, reason: (error as Error).message }) };
  }
}

/** The recording stopped and its file as an artifact; null (logged) when there is no video. */
async function finishVideo(deps: ExecutorDeps, id: number, recording: Recording): Promise<Artifact | null> {
  const video = await recording.stop().catch((error: Error) => ({ file: null, reason: error.message }));
  if (video.file !== null) return { kind: 'video', path: video.file, name: 'video.mp4' };
  deps.log(`device run ${id}: no video: ${video.reason}`);
  return null;
}

async function upload(deps: ExecutorDeps, deviceRunId: number, artifact: Artifact, policy: RetryPolicy): Promise<void> {
  try {
    await deps.client.artifact(deviceRunId, artifact.path, artifact.name, artifact.kind, policy);
  } catch (error) {
    deps.log(`device run ${deviceRunId}: artifact ${artifact.name} could not be uploaded: ${(error as Error).message}`);
  }
}
