/**
 * Faults: a server and an agent (real processes, virtual devices) take uploads and runs while
 * the server is killed with SIGKILL during uploads, during run starts and while results are
 * posted, the agent is killed mid-run, and (on PostgreSQL) the database is restarted under load.
 * Afterwards every accepted upload is complete or absent, every run reached FINISHED whole, no
 * device run was executed twice, no device is stuck in TESTING, and no request got a 500.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { POSTGRES_URL } from '../../test/support/engines.ts';
import { zip } from '../../test/support/zips.ts';
import {
  type SentUpload,
  checkDevices,
  checkLedger,
  checkReplaced,
  checkRuns,
  checkUploads,
  settleRuns,
} from '../support/checks.ts';
import { startCloud } from '../support/cloud.ts';
import { type PrivatePostgres, startPrivatePostgres } from '../support/postgres.ts';
import { type ScenarioReport, keepLogs } from '../support/report.ts';
import { type Call, NoAnswer, caller, newTraffic, patiently } from '../support/traffic.ts';
import { uploadFile } from '../support/uploads.ts';

export interface FaultOptions {
  readonly engine: 'sqlite' | 'postgres';
  readonly quick: boolean;
  readonly log: (line: string) => void;
}

const APP = path.resolve(import.meta.dirname, '../../examples/dist/sample-app.apk');
const ANDROID_APPIUM_SERVER_SIDE = 4;
const KiB = 1024;

/** Writes what ran where to the ledger; a short test, so that many device runs pass through the faults. */
const SCRIPT = `set -eu
echo "start $DEVICE_RUN_ID $DEVICE_SERIAL" >> "$LEDGER"
sleep 0.2
mkdir -p "$OUTPUT_DIR"
echo '<testsuite name="chaos" tests="1"><testcase classname="chaos.Faults" name="survives"/></testsuite>' > "$OUTPUT_DIR/junit.xml"
echo "end $DEVICE_RUN_ID" >> "$LEDGER"
`;

export async function faultsScenario(options: FaultOptions): Promise<ScenarioReport> {
  const { log, quick } = options;
  const traffic = newTraffic();
  const lost: string[] = [];
  const errors: string[] = [];
  const skipped: string[] = [];
  const figures: Record<string, number | string> = {};
  let faults = 0;

  const database = options.engine === 'postgres' ? await postgresFor(skipped) : undefined;
  const cloud = await startCloud({ databaseUrl: database?.url, devices: quick ? 6 : 12 });
  const call = caller(traffic, cloud.url);
  const ledger = path.join(cloud.dir, 'ledger.txt');
  /** Restarts a server that died without being killed (a crash is an error, and the scenario goes on). */
  const noteCrash = async () => {
    const crash = cloud.crashed();
    if (crash === undefined) return;
    errors.push(crash);
    await cloud.startServer();
  };
  const killServer = async (downMs: number, what: string) => {
    log(`  kill -9 the server ${what}`);
    await cloud.killServer();
    faults += 1;
    await sleep(downMs);
    await cloud.startServer();
  };

  try {
    await cloud.startServer();
    await cloud.startAgent();
    const users: Array<{ id: number; apiKey: string }> = [];
    for (const plan of ['SILVER', 'GOLD', 'PLATINUM'])
      users.push(await cloud.createUser(`${plan.toLowerCase()}@chaos.example`, plan));
    const android = (
      (await call('GET', '/api/v2/devices?limit=0')).body.data as Array<{ id: number; osType: string }>
    ).filter((device) => device.osType === 'ANDROID');
    const testsPath = path.join(cloud.dir, 'ledger-tests.zip');
    fs.writeFileSync(testsPath, await zip([['run-tests.sh', SCRIPT, 0o100755]]));
    const inputs: Array<Array<{ id: number; action: string }>> = [];
    for (const user of users) {
      const app = await uploadFile(call, user.apiKey, 'sample-app.apk', fs.readFileSync(APP));
      const tests = await uploadFile(call, user.apiKey, 'ledger-tests.zip', fs.readFileSync(testsPath));
      inputs.push([
        { id: app.body.id, action: 'INSTALL' },
        { id: tests.body.id, action: 'RUN_TEST' },
      ]);
    }
    const config = (index: number) => ({
      osType: 'ANDROID',
      frameworkId: ANDROID_APPIUM_SERVER_SIDE,
      projectName: 'chaos',
      deviceIds: android.map((device) => device.id),
      files: inputs[index % users.length],
      testRunParameters: [{ key: 'LEDGER', value: ledger }],
      maxAutoRetriesCount: 1,
      // Every fourth run records its screen, so that kills still cut recordings (an ffmpeg per
      // device run was a third of the scenario's CPU, and no promise here is about videos).
      videoRecordingEnabled: index % 4 === 0,
    });

    // 1. Uploads cut by the kill: each trickles in, so the bigger ones are in flight when it comes.
    log('uploads, killed half-way');
    const uploader = users[0]!;
    const sent: SentUpload[] = [];
    const uploads = Array.from({ length: quick ? 8 : 16 }, async (_, index) => {
      const bytes = randomBytes((index + 1) * 256 * KiB);
      const upload: SentUpload = {
        name: `chaos-upload-${index}.bin`,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        size: bytes.length,
      };
      sent.push(upload);
      try {
        const answer = await uploadFile(call, uploader.apiKey, upload.name, bytes, { chunk: 32 * KiB, everyMs: 15 });
        if (answer.status === 201) upload.id = answer.body.id;
        else errors.push(`upload ${upload.name} answered ${answer.status}: ${answer.text.slice(0, 120)}`);
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
      }
    });
    await sleep(500);
    await killServer(300, 'during uploads');
    await Promise.all(uploads);
    figures['uploads accepted / cut by the kill'] =
      `${sent.filter((u) => u.id !== undefined).length} / ${sent.filter((u) => u.id === undefined).length}`;

    // 2. Run starts, killed when a third of them have been answered.
    log('run starts, killed a third of the way');
    const acknowledged: number[] = [];
    const starts = quick ? 18 : 45;
    const cut: number[] = [];
    const starting = Array.from({ length: starts }, async (_, index) => {
      await sleep(index * 15);
      try {
        const answer = await call('POST', '/api/v2/runs', {
          key: users[index % users.length]!.apiKey,
          json: config(index),
          label: 'start run',
        });
        if (answer.status === 201) acknowledged.push(answer.body.id);
        else errors.push(`a run start answered ${answer.status}: ${answer.text.slice(0, 160)}`);
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
        cut.push(index);
      }
    });
    await until(() => acknowledged.length >= starts / 3, 30_000);
    await killServer(300, 'during run starts');
    await Promise.all(starting);
    figures['run starts accepted / cut by the kill'] = `${acknowledged.length} / ${cut.length}`;
    // A client whose start got no answer tries again, as the CLI's user would.
    for (const index of cut) {
      const answer = await patiently(() =>
        call('POST', '/api/v2/runs', {
          key: users[index % users.length]!.apiKey,
          json: config(index),
          label: 'start run',
        }),
      );
      if (answer.status === 201) acknowledged.push(answer.body.id);
    }

    // Pollers, as CI scripts poll their runs, through everything that follows.
    const polling = new AbortController();
    const pollers = users.map((user) => poll(call, user.apiKey, polling.signal));

    // 3. Result posts cut by kills: the server dies while device runs are ending.
    const kills = quick ? 2 : 4;
    for (let i = 0; i < kills; i++) {
      const ended = countLines(ledger, 'end');
      await until(() => countLines(ledger, 'end') >= ended + 2, 60_000);
      await killServer(200 + i * 300, `while results are posted (${countLines(ledger, 'end')} device runs ended)`);
      await noteCrash();
    }

    // 4. The agent dies mid-run and its host restarts it.
    const running = () => countLines(ledger, 'start') - countLines(ledger, 'end');
    await until(() => running() > 0, 60_000);
    log(`  kill -9 the agent with ${running()} device runs in progress`);
    await cloud.killAgent();
    faults += 1;
    await sleep(500);
    await cloud.startAgent();

    // 5. The database restarts under load (PostgreSQL): connections are cut, the server stays up.
    if (database?.restart !== undefined) {
      for (const mode of quick ? (['fast'] as const) : (['fast', 'immediate'] as const)) {
        await until(() => running() > 0, 60_000);
        log(`  restart PostgreSQL (${mode}) with ${running()} device runs in progress`);
        await database.restart(mode);
        faults += 1;
        await sleep(1500);
        await noteCrash();
      }
      // More runs right after the restart: the pool must hand out working connections again.
      for (let index = 0; index < 3; index++) {
        const answer = await patiently(() =>
          call('POST', '/api/v2/runs', { key: users[index]!.apiKey, json: config(index), label: 'start run' }),
        );
        if (answer.status === 201) acknowledged.push(answer.body.id);
        else
          errors.push(`a run start after the database restart answered ${answer.status}: ${answer.text.slice(0, 160)}`);
      }
    }

    log('waiting for every run to finish');
    for (const user of users) await settleRuns(call, user.apiKey, quick ? 120_000 : 300_000);
    polling.abort();
    await Promise.all(pollers);
    await noteCrash();

    const uploadCheck = await checkUploads(call, uploader.apiKey, sent, cloud.url);
    lost.push(...uploadCheck.lost);
    figures['uploads committed though their answer was lost'] = uploadCheck.committedUnanswered;
    const present = new Set<number>();
    const current = new Set<number>();
    let retried = 0;
    for (const user of users) {
      const check = await checkRuns(call, user.apiKey, android.length);
      lost.push(...check.lost);
      for (const id of check.runIds) present.add(id);
      for (const id of check.currentSessionIds) current.add(id);
      retried += check.retried;
    }
    for (const id of acknowledged) if (!present.has(id)) lost.push(`run ${id} was accepted but is gone`);
    const replacedCheck = await checkReplaced(
      call,
      users.map((user) => user.apiKey),
      ledger,
      current,
    );
    lost.push(...replacedCheck.lost);
    const ledgerCheck = checkLedger(ledger);
    lost.push(...ledgerCheck.lost);
    lost.push(...(await checkDevices(call)));
    errors.push(...traffic.serverErrors);
    Object.assign(figures, {
      runs: present.size,
      'runs committed though their answer was lost': present.size - acknowledged.length,
      'device sessions': current.size + replacedCheck.replaced,
      'device sessions retried after a lost agent or server': retried,
      'device sessions a retry replaced (read by id)': replacedCheck.replaced,
      'device runs executed': ledgerCheck.executions,
      '503 answers while the database restarted': traffic.statuses.get(503) ?? 0,
    });
  } finally {
    if (lost.length + errors.length > 0) keepLogs(`faults-${options.engine}`, cloud.output(), log);
    await cloud.stop();
    await database?.destroy();
  }
  return { name: `faults (${options.engine})`, traffic, faults, inputs: 0, lost, errors, figures, skipped };
}

interface Database {
  readonly url: string;
  readonly restart?: PrivatePostgres['restart'];
  destroy(): Promise<void>;
}

/** A private PostgreSQL server (restartable), else a database of its own on the shared server. */
async function postgresFor(skipped: string[]): Promise<Database> {
  const own = await startPrivatePostgres();
  if (!('unavailable' in own)) return own;
  skipped.push(`restarting PostgreSQL under load: ${own.unavailable}; the other faults ran on the shared server`);
  const name = `dc_chaos_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async destroy() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** Polls the user's runs and each unfinished one until `signal` aborts; faults make some polls go unanswered. */
async function poll(call: Call, key: string, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      const list = await call('GET', '/api/me/projects?limit=5&embedRuns=3', { key, label: 'poll' });
      const runs =
        list.status === 200
          ? (list.body.data as Array<{ testRuns: Array<{ id: number; state: string }> }>).flatMap(
              (project) => project.testRuns,
            )
          : [];
      for (const run of runs.filter((r) => r.state !== 'FINISHED').slice(0, 3))
        await call('GET', `/api/v2/runs/${run.id}`, { key, label: 'poll' });
    } catch (error) {
      if (!(error instanceof NoAnswer)) throw error;
    }
    await sleep(300);
  }
}

function countLines(file: string, kind: string): number {
  if (!fs.existsSync(file)) return 0;
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${kind} `)).length;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms`);
    await sleep(50);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
