/**
 * Executes one device run on one device, around the driver: downloads the inputs (cached by
 * checksum), enforces the timeout, forwards steps and samples to the server in batches, decides
 * the outcome (test failures and infrastructure failures kept apart), uploads artifacts, reports
 * the result. Partial results of an aborted or timed-out run are still parsed and sent.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { StepType } from '../domain/runs.ts';
import type { TestCase } from '../domain/test-cases.ts';
import { extractZip } from '../files/zip.ts';
import type { Assignment, ProgressReport, ResultReport } from '../protocol/v1.ts';
import { parseJUnit } from '../results/junit.ts';
import type { ProtocolClient, RetryPolicy } from './client.ts';
import type { Artifact, Driver, ExecutionResult, Job, LocalFile, PerformanceSample } from './driver.ts';

export interface ExecutorDeps {
  readonly client: ProtocolClient;
  readonly driver: Driver;
  /** Holds `cache/` (inputs by checksum) and `work/` (one folder per device run). */
  readonly dataDir: string;
  readonly log: (message: string) => void;
  /** How long reports keep being retried while the server is unreachable. */
  readonly reportPatienceMs: number;
}

export interface Execution {
  /** Stops the run; `reason` decides the outcome (a user abort, or the agent shutting down). */
  stop(reason: 'aborted' | 'shutdown'): void;
  readonly done: Promise<void>;
}

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
): Promise<void> {
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
  const step = (type: StepType) => steps.push({ type: type as ProgressReport['steps'][number]['type'], time: Date.now() });

  let result: ExecutionResult;
  try {
    const inputs = await download(deps, assignment, workDir, policy);
    const job: Job = {
      deviceRunId: id,
      serial,
      kind: assignment.kind as Job['kind'],
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
      unzip: async (zipPath, destDir) => {
        await extractZip(zipPath, destDir);
      },
    });
  } catch (error) {
    result = { outcome: 'INFRA_ERROR', failReason: (error as Error).message, testCases: null, exitCode: null, artifacts: [] };
  } finally {
    clearTimeout(timer);
  }

  step('SENDING_RESULTS');
  const testCases = collectTestCases(result);
  const report = decide(result, testCases, stopReason());
  clearInterval(flusher);
  // The step report and the artifacts go up together, a few artifacts at a time; the last step
  // and samples go with the result.
  await Promise.all([flush(), uploadAll(deps, id, result.artifacts, policy)]);
  step('PROCESSING_RESULTS');
  await flushing;
  try {
    await client.result(id, { seq: ++seq, ...report, steps: steps.splice(0), samples: samples.splice(0) }, policy);
    deps.log(`device run ${id} on ${serial}: ${report.outcome}${report.failReason ? ` (${report.failReason})` : ''}`);
  } catch (error) {
    deps.log(`device run ${id}: the result could not be reported: ${(error as Error).message}`);
  }
  await fs.promises.rm(workDir, { recursive: true, force: true });
}

interface Input {
  readonly action: Assignment['files'][number]['action'];
  readonly file: LocalFile;
}

/**
 * Inputs are cached by checksum: the same app on many devices is fetched once per host. A cached
 * file is only ever renamed into place after its checksum was verified, so it is trusted as is.
 */
async function download(deps: ExecutorDeps, assignment: Assignment, workDir: string, policy: RetryPolicy): Promise<Input[]> {
  const cacheDir = path.join(deps.dataDir, 'cache');
  await fs.promises.mkdir(cacheDir, { recursive: true });
  return Promise.all(assignment.files.map(async (file): Promise<Input> => {
    const cached = path.join(cacheDir, file.sha256);
    if (!fs.existsSync(cached)) {
      const partial = `${cached}.${process.pid}.${assignment.deviceRunId}.part`;
      await deps.client.download(file.url, partial, policy);
      const actual = await sha256Of(partial);
      if (actual !== file.sha256) {
        await fs.promises.rm(partial, { force: true });
        throw new Error(`download of ${file.name} was corrupted (checksum ${actual.slice(0, 12)}, expected ${file.sha256.slice(0, 12)})`);
      }
      await fs.promises.rename(partial, cached);
    }
    const local = path.join(workDir, 'inputs', `${file.id}-${path.basename(file.name)}`);
    // A copy (a clone where the file system can), so that a test changing its input leaves the cache alone.
    await fs.promises.copyFile(cached, local, fs.constants.COPYFILE_FICLONE);
    return { action: file.action, file: { path: local, name: file.name, properties: file.properties } };
  }));
}

async function sha256Of(filePath: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(filePath)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Test cases the driver knew, else those of its JUnit files; unreadable JUnit is reported, not fatal. */
function collectTestCases(result: ExecutionResult): { cases: TestCase[]; problem: string | null } {
  if (result.testCases !== null) return { cases: [...result.testCases], problem: null };
  const cases: TestCase[] = [];
  const problems: string[] = [];
  for (const artifact of result.artifacts.filter((candidate) => candidate.kind === 'junit')) {
    try {
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
 * not); otherwise the tests decide.
 */
export function decide(
  result: ExecutionResult,
  collected: { cases: TestCase[]; problem: string | null },
  stopReason: 'aborted' | 'shutdown' | 'timeout' | null,
): Omit<ResultReport, 'seq'> {
  const testCases = collected.cases;
  const outcome = (outcome: ResultReport['outcome'], failReason: string | null) => ({ outcome, failReason, testCases });
  if (stopReason === 'aborted') return outcome('ABORTED', 'aborted by the user');
  if (stopReason === 'timeout') return outcome('TIMEOUT', 'the tests did not finish within the timeout; partial results kept');
  if (stopReason === 'shutdown') return outcome('WARNING', 'the agent shut down while the device run was in progress');
  // A broken sandbox limit is the tests' doing: FAILED, saying which limit, whatever they reported.
  if (result.breach !== undefined) return outcome('FAILED', result.breach.message);
  if (result.outcome === 'REFUSED') return { ...outcome('WARNING', result.failReason ?? 'the device cannot do what the run asked'), refused: true };
  if (result.outcome !== 'COMPLETED') return outcome('WARNING', result.failReason ?? 'the device run could not be completed');
  if (testCases.some((testCase) => testCase.result === 'FAILED')) return outcome('FAILED', collected.problem);
  if (collected.problem !== null) return outcome('FAILED', collected.problem);
  if (testCases.length === 0) {
    const exit = result.exitCode !== null && result.exitCode !== 0 ? `exited with code ${result.exitCode} and ` : '';
    return outcome('FAILED', result.failReason ?? `the tests ${exit}reported no results (write JUnit XML into $OUTPUT_DIR)`);
  }
  if (result.exitCode !== null && result.exitCode !== 0) return outcome('FAILED', `the tests passed but run-tests.sh exited with code ${result.exitCode}`);
  return outcome('SUCCEEDED', null);
}

const PARALLEL_UPLOADS = 4;

async function uploadAll(deps: ExecutorDeps, deviceRunId: number, artifacts: readonly Artifact[], policy: RetryPolicy): Promise<void> {
  const queue = [...artifacts];
  const worker = async () => {
    for (let artifact = queue.shift(); artifact !== undefined; artifact = queue.shift()) await upload(deps, deviceRunId, artifact, policy);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_UPLOADS, queue.length) }, worker));
}

async function upload(deps: ExecutorDeps, deviceRunId: number, artifact: Artifact, policy: RetryPolicy): Promise<void> {
  try {
    await deps.client.artifact(deviceRunId, artifact.path, artifact.name, artifact.kind, policy);
  } catch (error) {
    deps.log(`device run ${deviceRunId}: artifact ${artifact.name} could not be uploaded: ${(error as Error).message}`);
  }
}
