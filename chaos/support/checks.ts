/**
 * What must hold after the faults, read back through the public API and the test scripts' ledger:
 * every accepted upload is complete, every file present is complete, every run is whole and
 * FINISHED, every session a retry replaced is still readable by id, no device run was executed
 * twice, and no device is left TESTING.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { type Call, patiently } from './traffic.ts';

export interface SentUpload {
  readonly name: string;
  readonly sha256: string;
  readonly size: number;
  /** The id the server answered with, when it answered 201. */
  id?: number;
}

const sha256 = (bytes: ArrayBuffer | Buffer) =>
  createHash('sha256')
    .update(Buffer.from(bytes as ArrayBuffer))
    .digest('hex');

/** Every upload acknowledged is there with its bytes; every upload present is whole (complete or absent). */
export async function checkUploads(
  call: Call,
  key: string,
  sent: readonly SentUpload[],
  base: () => string,
): Promise<{ lost: string[]; committedUnanswered: number }> {
  const lost: string[] = [];
  const listed = (await patiently(() => call('GET', '/api/me/files?limit=0', { key }))).body.data as Array<{
    id: number;
    name: string;
    size: number;
    state: string;
  }>;
  const byName = new Map(sent.map((upload) => [upload.name, upload]));
  let committedUnanswered = 0;
  for (const file of listed) {
    const upload = byName.get(file.name);
    if (upload === undefined) continue;
    const response = await fetch(`${base()}/api/me/files/${file.id}/file`, {
      headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
    });
    const bytes = await response.arrayBuffer();
    if (file.state !== 'READY' || file.size !== upload.size || sha256(bytes) !== upload.sha256) {
      lost.push(
        `upload ${file.name} (file ${file.id}) is half-written: ${file.state}, ${file.size} of ${upload.size} bytes, ${bytes.byteLength} downloaded`,
      );
    }
    if (upload.id === undefined) committedUnanswered += 1;
  }
  const present = new Set(listed.map((file) => file.id));
  for (const upload of sent)
    if (upload.id !== undefined && !present.has(upload.id))
      lost.push(`upload ${upload.name} was accepted as file ${upload.id} but is gone`);
  return { lost, committedUnanswered };
}

export interface RunCheck {
  readonly lost: string[];
  readonly runIds: number[];
  /** The runs' current device sessions (a retried one is replaced by its retry in the run's lists). */
  readonly currentSessionIds: number[];
  /** Current sessions that are retries (after a lost agent or server). */
  readonly retried: number;
}

/**
 * Every run of the user is FINISHED and whole: exactly one current device session per device of the
 * run (a session a retry replaced leaves the run's lists; checkReplaced finds those by id).
 */
export async function checkRuns(call: Call, key: string, devicesPerRun: number): Promise<RunCheck> {
  const lost: string[] = [];
  const projects = (await patiently(() => call('GET', '/api/me/projects?limit=0&embedRuns=0', { key }))).body
    .data as Array<{ id: number }>;
  const runs: Array<{ id: number; state: string; deviceCount: number }> = [];
  for (const project of projects)
    runs.push(
      ...(await patiently(() => call('GET', `/api/me/projects/${project.id}/runs?limit=0`, { key }))).body.data,
    );
  const currentSessionIds: number[] = [];
  let retried = 0;
  for (const run of runs) {
    if (run.state !== 'FINISHED') lost.push(`run ${run.id} is ${run.state}, not FINISHED`);
    const sessions = (await patiently(() => call('GET', `/api/v2/runs/${run.id}/device-sessions?limit=0`, { key })))
      .body.data as Array<{ id: number; retryState: string; device: { id: number } }>;
    const devices = new Set(sessions.map((session) => session.device.id)).size;
    if (run.deviceCount !== devicesPerRun || sessions.length !== devicesPerRun || devices !== devicesPerRun)
      lost.push(
        `run ${run.id} is not whole: ${run.deviceCount} devices counted, ${sessions.length} current device sessions on ${devices} devices, ${devicesPerRun} expected`,
      );
    currentSessionIds.push(...sessions.map((session) => session.id));
    retried += sessions.filter((session) => session.retryState !== 'NONE').length;
  }
  return { lost, runIds: runs.map((run) => run.id), currentSessionIds, retried };
}

/**
 * Every device run the test scripts started (the ledger) that is not a current session was replaced
 * by a retry: it must still be readable by its own id, by one of the users, and be ended.
 */
export async function checkReplaced(
  call: Call,
  keys: readonly string[],
  ledger: string,
  current: ReadonlySet<number>,
): Promise<{ lost: string[]; replaced: number }> {
  const lines = fs.existsSync(ledger) ? fs.readFileSync(ledger, 'utf8').split('\n').filter(Boolean) : [];
  const started = new Set(lines.filter((line) => line.startsWith('start ')).map((line) => Number(line.split(' ')[1])));
  const lost: string[] = [];
  let replaced = 0;
  for (const id of started) {
    if (current.has(id)) continue;
    let state: string | undefined;
    for (const key of keys) {
      const answer = await patiently(() => call('GET', `/api/v2/device-sessions/${id}`, { key }));
      if (answer.status === 200) state = (answer.body as { state: string }).state;
      if (state !== undefined) break;
    }
    if (state === undefined) lost.push(`device session ${id} ran but is neither current nor readable by its id`);
    else if (['WAITING', 'RUNNING', 'FINISHING'].includes(state))
      lost.push(`device session ${id} was replaced by a retry but is still ${state}`);
    else replaced += 1;
  }
  return { lost, replaced };
}

/** Lines `start <deviceRunId> <serial>` and `end <deviceRunId>` that the test scripts wrote. */
export function checkLedger(ledger: string): { lost: string[]; executions: number } {
  const lines = fs.existsSync(ledger) ? fs.readFileSync(ledger, 'utf8').split('\n').filter(Boolean) : [];
  const started = new Map<string, number>();
  for (const line of lines) {
    const [kind, id] = line.split(' ');
    if (kind === 'start') started.set(id!, (started.get(id!) ?? 0) + 1);
  }
  const lost = [...started]
    .filter(([, count]) => count > 1)
    .map(([id, count]) => `device run ${id} was executed ${count} times`);
  return { lost, executions: started.size };
}

/** Devices still TESTING once every run finished and cleaning had time to end. */
export async function checkDevices(call: Call, timeoutMs = 30_000): Promise<string[]> {
  const started = Date.now();
  for (;;) {
    const devices = (await patiently(() => call('GET', '/api/v2/devices?limit=0'))).body.data as Array<{
      id: number;
      displayName: string;
      lockReason: string | null;
    }>;
    const stuck = devices.filter((device) => device.lockReason === 'TESTING' || device.lockReason === 'CLEANING');
    if (stuck.length === 0) return [];
    if (Date.now() - started > timeoutMs)
      return stuck.map((device) => `device ${device.displayName} (${device.id}) is stuck ${device.lockReason}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Waits until every run of the user is FINISHED, as long as their device runs keep ending: it gives
 * up after `stillMs` without one more device run ended (checkRuns then says which are not), so a
 * busy machine only makes it slower, and a stuck run is named rather than timed out.
 */
export async function settleRuns(call: Call, key: string, stillMs: number): Promise<void> {
  let lastProgress = Date.now();
  let ended = -1;
  while (Date.now() - lastProgress < stillMs) {
    const answer = await patiently(() =>
      call('GET', '/api/me/projects?limit=0&embedRuns=100', { key, label: 'settle' }),
    );
    const runs = (
      answer.body.data as Array<{ testRuns: Array<{ state: string; finishedDeviceCount?: number }> }>
    ).flatMap((project) => project.testRuns);
    if (runs.every((run) => run.state === 'FINISHED')) return;
    const now = runs.reduce((sum, run) => sum + (run.finishedDeviceCount ?? 0), 0);
    if (now !== ended) {
      ended = now;
      lastProgress = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
