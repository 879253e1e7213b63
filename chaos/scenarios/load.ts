/**
 * Load: 200 concurrent clients against the cloud `npm start` runs (`devicecloud local`: server,
 * agent and virtual devices in one process, SQLite), for two minutes (20 s with --quick). Each
 * client is a CI pipeline: it starts a run on a device, polls it every second until it finishes,
 * now and then lists its projects, reads the finished run's device sessions and test cases, and
 * starts the next. Twenty accounts share the clients, as teams share a cloud. Every answer must be
 * a success; the cloud's memory (server and agent), sampled every second, must not keep growing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, startCli } from '../../test/support/cli.ts';
import { zip } from '../../test/support/zips.ts';
import { freePort } from '../support/postgres.ts';
import type { ScenarioReport } from '../support/report.ts';
import { type Answer, type Call, NoAnswer, caller, newTraffic, percentile } from '../support/traffic.ts';

const APP = path.resolve(import.meta.dirname, '../../examples/dist/sample-app.apk');
const CLIENTS = 200;
const ACCOUNTS = 20;
const MiB = 1024 * 1024;
/** Server and agent together: what a cloud of 12 virtual devices has no reason to approach. */
const CEILING = 1024 * MiB;

const SCRIPT = `set -eu
sleep 0.1
mkdir -p "$OUTPUT_DIR"
echo '<testsuite name="load" tests="2"><testcase classname="load.Client" name="a"/><testcase classname="load.Client" name="b"/></testsuite>' > "$OUTPUT_DIR/junit.xml"
`;

export async function loadScenario(options: {
  quick: boolean;
  log: (line: string) => void;
  seconds?: number;
}): Promise<ScenarioReport> {
  const seconds = options.seconds ?? (options.quick ? 20 : 120);
  const traffic = newTraffic();
  const errors: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-load-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const call = caller(traffic, () => base);
  const operator = await runCli([
    'admin',
    'create-user',
    '--email',
    'operator@load.example',
    '--password',
    'load-password-1',
    '--role',
    'ADMIN',
    '--json',
    '--data-dir',
    dir,
  ]);
  if (operator.code !== 0) throw new Error(operator.stderr);
  const operatorKey = JSON.parse(operator.stdout).apiKey as string;
  const cloud = startCli(['local', '--port', String(port), '--data-dir', dir, '--devices', '12']);
  const samples: Array<{ at: number; rss: number }> = [];
  try {
    await cloud.waitFor(/API key\s+\w+/);
    const pid = cloud.child.pid!;
    options.log(`load: ${CLIENTS} clients of ${ACCOUNTS} accounts for ${seconds} s against devicecloud local`);
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, (_, index) => account(call, operatorKey, index)),
    );
    const android = (
      (await call('GET', '/api/v2/devices?limit=0')).body.data as Array<{ id: number; osType: string }>
    ).filter((device) => device.osType === 'ANDROID');

    // Setting up (accounts, tokens, uploads) is not what is measured.
    traffic.latencies.clear();
    const started = Date.now();
    const deadline = started + seconds * 1000;
    const sampler = setInterval(() => samples.push({ at: Date.now() - started, rss: rssOf(pid) }), 1000);
    const outcomes = { started: 0, finished: 0 };
    const clients = Array.from({ length: CLIENTS }, (_, index) =>
      pipeline(call, accounts[index % ACCOUNTS]!, android[index % android.length]!.id, deadline, outcomes).catch(
        (error: Error) => {
          errors.push(`client ${index}: ${error.message}`);
        },
      ),
    );
    await Promise.all(clients);
    clearInterval(sampler);
    const elapsed = (Date.now() - started) / 1000;
    if (cloud.child.exitCode !== null)
      errors.push(`devicecloud local exited under load: ${cloud.output().slice(-1000)}`);

    const failed = [...traffic.statuses].filter(([status]) => status >= 400);
    for (const [status, count] of failed) errors.push(`${count} answers of ${status}`);
    if (traffic.unanswered > 0) errors.push(`${traffic.unanswered} requests got no answer`);
    const half = samples.filter((sample) => sample.at < (seconds * 1000) / 2);
    const later = samples.filter((sample) => sample.at >= (seconds * 1000) / 2);
    const firstPeak = Math.max(...half.map((sample) => sample.rss));
    const laterPeak = Math.max(...later.map((sample) => sample.rss));
    // Warm-up (statement caches, SQLite's page cache, the JIT, in two processes) takes a good part
    // of a minute; after it memory may breathe but must not climb with the requests served. A
    // shorter run can only be held to a ceiling.
    if (seconds >= 60 && laterPeak - firstPeak > Math.max(64 * MiB, firstPeak / 4))
      errors.push(
        `memory kept growing: ${mib(firstPeak)} MiB peak in the first half, ${mib(laterPeak)} MiB in the second`,
      );
    if (laterPeak > CEILING) errors.push(`memory went past ${mib(CEILING)} MiB: ${mib(laterPeak)} MiB`);
    const all = [...traffic.latencies.values()].flat();
    const figures: Record<string, number | string> = {
      clients: CLIENTS,
      seconds: Math.round(elapsed),
      'requests per second': traffic.requests / elapsed,
      'latency p50 / p99 (ms), all requests': `${percentile(all, 50).toFixed(1)} / ${percentile(all, 99).toFixed(1)}`,
    };
    for (const [label, values] of traffic.latencies)
      figures[`latency p50 / p99 (ms), ${label}`] =
        `${percentile(values, 50).toFixed(1)} / ${percentile(values, 99).toFixed(1)} (${values.length})`;
    Object.assign(figures, {
      'runs started / finished': `${outcomes.started} / ${outcomes.finished}`,
      'RSS of server and agent (MiB): first-half peak / second-half peak / end': `${mib(firstPeak)} / ${mib(laterPeak)} / ${mib(samples.at(-1)?.rss ?? 0)}`,
    });
    return {
      name: 'load (npm start, SQLite)',
      traffic,
      faults: 0,
      inputs: 0,
      lost: [],
      errors: errors.slice(0, 30),
      figures,
      skipped: [],
    };
  } finally {
    await cloud.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Account {
  readonly key: string;
  readonly files: Array<{ id: number; action: string }>;
}

/**
 * An account made by the operator, its key revealed as the dashboard does (signed in, so the
 * sign-in is recent; an OAuth token is not shown the key), and its app and tests uploaded.
 */
async function account(call: Call, operatorKey: string, index: number): Promise<Account> {
  const email = `team${index}@load.example`;
  const password = 'load-password-1';
  must(
    await call('POST', '/api/v2/admin/users', {
      key: operatorKey,
      form: { email, password, plan: ['SILVER', 'GOLD', 'PLATINUM'][index % 3]! },
    }),
    'create an account',
  );
  const session = must(await call('POST', '/auth/session', { json: { email, password } }), 'sign in');
  const cookie = String(session.headers.get('set-cookie')).split(';')[0]!;
  const revealed = must(
    await call('POST', '/auth/api-key', { headers: { cookie, 'x-csrf-token': session.body.csrfToken } }),
    'reveal the key',
  );
  const key = revealed.body.apiKey as string;
  const upload = async (name: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('file', new Blob([bytes]), name);
    return must(await call('POST', '/api/me/files', { key, body: form, label: 'upload' }), `upload ${name}`).body
      .id as number;
  };
  const app = await upload('sample-app.apk', fs.readFileSync(APP));
  const tests = await upload('load-tests.zip', await zip([['run-tests.sh', SCRIPT, 0o100755]]));
  return {
    key,
    files: [
      { id: app, action: 'INSTALL' },
      { id: tests, action: 'RUN_TEST' },
    ],
  };
}

/** One CI pipeline: start a run, poll it to the end, read its results, again, until the deadline. */
async function pipeline(
  call: Call,
  account: Account,
  deviceId: number,
  deadline: number,
  outcomes: { started: number; finished: number },
): Promise<void> {
  const { key } = account;
  // Clients start spread over the first seconds, as pipelines do.
  await sleep(Math.random() * 3000);
  while (Date.now() < deadline) {
    const run = await answered(
      call('POST', '/api/v2/runs', {
        key,
        label: 'start run',
        json: { osType: 'ANDROID', frameworkId: 4, projectName: 'load', deviceIds: [deviceId], files: account.files },
      }),
    );
    if (run?.status !== 201) return;
    outcomes.started += 1;
    let state = run.body.state as string;
    for (let polls = 0; state !== 'FINISHED' && Date.now() < deadline; polls++) {
      await sleep(800 + Math.random() * 400);
      const poll = await answered(call('GET', `/api/v2/runs/${run.body.id}`, { key, label: 'poll run' }));
      if (poll?.status !== 200) return;
      state = poll.body.state;
      if (polls % 5 === 4) await answered(call('GET', '/api/me/projects?limit=5', { key, label: 'list projects' }));
    }
    if (state !== 'FINISHED') return;
    outcomes.finished += 1;
    const sessions = await answered(
      call('GET', `/api/v2/runs/${run.body.id}/device-sessions`, { key, label: 'results' }),
    );
    const session = sessions?.body?.data?.[0];
    if (session !== undefined)
      await answered(call('GET', `/api/v2/device-sessions/${session.id}/test-case-runs`, { key, label: 'results' }));
  }
}

/** The answer, or undefined when none came (counted by the traffic as unanswered). */
async function answered(request: Promise<Answer>): Promise<Answer | undefined> {
  try {
    return await request;
  } catch (error) {
    if (error instanceof NoAnswer) return undefined;
    throw error;
  }
}

function must(answer: Answer, what: string): Answer {
  if (answer.status >= 300) throw new Error(`could not ${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
  return answer;
}

/** Resident memory of the cloud: the `local` process and its agent process (not the tests the agent runs). */
function rssOf(pid: number): number {
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  const rss = (of: number) => Number(/VmRSS:\s+(\d+) kB/.exec(read(`/proc/${of}/status`))?.[1] ?? 0) * 1024;
  const agents = read(`/proc/${pid}/task/${pid}/children`).split(' ').filter(Boolean).map(Number);
  return rss(pid) + agents.reduce((sum, child) => sum + rss(child), 0);
}

const mib = (bytes: number) => Math.round(bytes / MiB);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
