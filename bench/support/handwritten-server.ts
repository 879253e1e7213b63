/**
 * Child process of the API read benchmark: the second baseline. The same two reads as ours, written
 * by hand against the same database: Fastify, the API key looked up by its hash, the same SQL
 * statements through better-sqlite3 or pg directly, the rows mapped to the same fields by hand,
 * then JSON.stringify or a hand-written XML. What ours does beyond it (auth plugins, Kysely,
 * presenters, schemas, encoders) is our own overhead. Announces (READY) {url} when it listens.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { READY } from './processes.ts';

type Row = Record<string, unknown>;
/** One statement, its rows; `?` placeholders, numbered for PostgreSQL. */
type Query = (sql: string, params: readonly unknown[]) => Promise<Row[]>;

const [engine, location] = process.argv.slice(2);
if (location === undefined) throw new Error('usage: handwritten-server.ts sqlite FILE | postgres URL');

function sqliteQuery(file: string): Query {
  const db = new Database(file, { readonly: true });
  const statements = new Map<string, Database.Statement>();
  return async (sql, params) => {
    let statement = statements.get(sql);
    if (statement === undefined) statements.set(sql, (statement = db.prepare(sql)));
    return statement.all(...params) as Row[];
  };
}

function postgresQuery(url: string): Query {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const numbered = new Map<string, string>();
  return async (sql, params) => {
    let text = numbered.get(sql);
    if (text === undefined) {
      let n = 0;
      numbered.set(sql, (text = sql.replace(/\?/g, () => `$${++n}`)));
    }
    return (await pool.query(text, params as unknown[])).rows as Row[];
  };
}

const query = engine === 'postgres' ? postgresQuery(location) : sqliteQuery(location);

const PROJECT = `SELECT *, (SELECT u.email FROM users u WHERE u.id = projects.user_id) AS owner_email FROM projects
  WHERE id = ? AND (user_id = ? OR id IN (SELECT sh.project_id FROM shares sh WHERE sh.project_id IS NOT NULL
  AND (sh.user_id = ? OR sh.access_group_id IN (SELECT agu.access_group_id FROM access_group_users agu WHERE agu.user_id = ?))))`;
const RUN_COUNT = `SELECT COUNT(*) AS total FROM test_runs tr JOIN projects p ON p.id = tr.project_id
  JOIN users u ON u.id = tr.started_by_id WHERE tr.project_id = ?`;
const RUN_PAGE = `SELECT tr.*, p.name AS project_name, u.email AS started_by_email FROM test_runs tr
  JOIN projects p ON p.id = tr.project_id JOIN users u ON u.id = tr.started_by_id WHERE tr.project_id = ?
  ORDER BY tr.create_time DESC NULLS LAST, tr.id DESC LIMIT ?`;
const list = (sql: string) =>
  engine === 'postgres'
    ? sql.replace('IN (SELECT value FROM json_each(?))', '= ANY(?::bigint[])')
    : sql.replace('= ANY(?::bigint[])', 'IN (SELECT value FROM json_each(?))');
const PROJECT_RUN_COUNTS = list(
  'SELECT project_id, count(*) AS count FROM test_runs WHERE project_id IN (SELECT value FROM json_each(?)) GROUP BY project_id',
);
const PROJECT_OUTCOMES =
  list(`SELECT project_id, count(*) AS "all", SUM(CASE WHEN state = 'SUCCEEDED' THEN 1 ELSE 0 END) AS succeeded
  FROM device_runs WHERE project_id IN (SELECT value FROM json_each(?)) AND state <> ? AND superseded = 0 GROUP BY project_id`);
const ids = (id: number) => (engine === 'postgres' ? [id] : JSON.stringify([id]));

async function caller(request: FastifyRequest, reply: FastifyReply): Promise<Row | undefined> {
  const header = request.headers.authorization ?? '';
  const key = Buffer.from(header.slice('Basic '.length), 'base64').toString().split(':')[0] ?? '';
  const [user] = await query('SELECT * FROM users WHERE api_key_hash = ?', [
    createHash('sha256').update(key).digest('hex'),
  ]);
  if (user === undefined) void reply.code(401).send({ message: 'unauthorized' });
  return user;
}

async function project(user: Row, id: number, reply: FastifyReply): Promise<Row | undefined> {
  const [found] = await query(PROJECT, [id, user.id, user.id, user.id]);
  if (found === undefined) void reply.code(404).send({ message: 'not found' });
  return found;
}

interface Tally {
  state: string;
  count: number;
  testCaseAllCount: number;
  testCasePassedCount: number;
  testCaseFailedCount: number;
}

function presentRun(row: Row, userId: unknown) {
  const config = JSON.parse(row.config_json as string) as Row;
  const tallies = JSON.parse((row.final_tallies_json as string | null) ?? '[]') as Tally[];
  const count = (state: string) => tallies.find((tally) => tally.state === state)?.count ?? 0;
  let devices = 0;
  let cases = 0;
  let passed = 0;
  let failed = 0;
  for (const tally of tallies) {
    devices += tally.count;
    cases += tally.testCaseAllCount;
    passed += tally.testCasePassedCount;
    failed += tally.testCaseFailedCount;
  }
  const finished = devices - count('WAITING') - count('RUNNING');
  const files = (config.files as Array<{ id: number; action: string }>).map((file) => ({
    id: file.id,
    selfURI: `/users/${userId}/files/${file.id}`,
    action: file.action,
    availableActions: ['INSTALL', 'COPY_TO_DEVICE'],
    file: null,
  }));
  const { v: _version, ...stored } = config;
  return {
    id: row.id,
    selfURI: `/users/${userId}/projects/${row.project_id}/runs/${row.id}`,
    projectId: row.project_id,
    projectName: row.project_name,
    number: row.number,
    displayName: row.name ?? `Test run ${row.number}`,
    state: row.state,
    createTime: Number(row.create_time),
    startTime: row.start_time === null ? null : Number(row.start_time),
    endTime: row.end_time === null ? null : Number(row.end_time),
    config: {
      ...stored,
      projectName: row.project_name,
      files,
      id: row.id,
      selfURI: `/users/${userId}/projects/${row.project_id}/runs/${row.id}/config`,
      testRunId: row.id,
      usedDeviceGroupId: null,
      usedDeviceGroupName: null,
      runAvailable: true,
      computedDevices: config.deviceIds,
      maxTestTimeout: { unit: 'SECONDS', value: 3600 },
      appCrawlerRun: false,
      applicationPassword: null,
      appiumBrokerAddress: null,
      availableDeviceGroups: null,
      availableDevices: null,
      availableFrameworks: null,
      availableOsTypes: null,
      clientSideTestConfig: null,
      creditsPrice: 0,
      deviceNamePattern: null,
      disableResigning: false,
      resignFiles: row.os_type === 'IOS',
      loadedPrevious: false,
      screenshotDir: null,
      status: null,
      statusCode: null,
      testRunNameGrouping: null,
      tunnelSettings: null,
      useSamples: false,
      videoRecordingEnabled: true,
    },
    frameworkId: row.framework_id,
    frameworkName: null,
    osType: row.os_type,
    deviceCount: devices,
    waitingDeviceCount: count('WAITING'),
    runningDeviceCount: count('RUNNING'),
    finishedDeviceCount: finished,
    succeededDeviceCount: count('SUCCEEDED'),
    failedDeviceCount: count('FAILED'),
    warningDeviceCount: count('WARNING'),
    errorsDeviceCount: count('FAILED') + count('WARNING'),
    excludedDeviceCount: count('EXCLUDED'),
    abortedDeviceCount: count('ABORTED'),
    timeoutedDeviceCount: count('TIMEOUTED'),
    testCaseCount: cases,
    executedTestCaseCount: passed + failed,
    successfulTestCaseCount: passed,
    failedTestCaseCount: failed,
    executionRatio: devices === 0 ? 0 : finished / devices,
    successRatio: cases === 0 ? 0 : passed / cases,
    startedById: row.started_by_id,
    startedByDisplayName: row.started_by_email,
    userId: row.user_id,
    message: null,
    queuePosition: null,
    uiLink: `http://127.0.0.1/#/projects/${row.project_id}/runs/${row.id}`,
    tags: [],
    billable: false,
    logsFileId: null,
    screenshotsFileId: null,
    totalDeviceCount: devices,
    rowIndex: null,
  };
}

const escape = (text: string) =>
  /[&<>\r]/.test(text)
    ? text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#13;')
    : text;

/** XML by hand: an element per non-null field, arrays as a wrapper of `<item>`s. */
function xml(value: unknown): string {
  if (typeof value === 'string') return escape(value);
  if (typeof value !== 'object' || value === null) return String(value);
  let out = '';
  if (Array.isArray(value)) {
    for (const item of value) if (item !== null) out += `<item>${xml(item)}</item>`;
    return out;
  }
  for (const [name, field] of Object.entries(value)) if (field !== null) out += `<${name}>${xml(field)}</${name}>`;
  return out;
}

function answer(request: FastifyRequest, reply: FastifyReply, root: string, body: unknown) {
  if ((request.headers.accept ?? '').includes('json'))
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  return reply
    .type('application/xml; charset=utf-8')
    .send(`<?xml version="1.0" encoding="UTF-8"?><${root}>${xml(body)}</${root}>`);
}

const app = Fastify();
app.get<{ Params: { projectId: string } }>('/api/me/projects/:projectId/runs', async (request, reply) => {
  const user = await caller(request, reply);
  if (user === undefined) return reply;
  const found = await project(user, Number(request.params.projectId), reply);
  if (found === undefined) return reply;
  const [{ total }] = (await query(RUN_COUNT, [found.id])) as [{ total: number }];
  const rows = await query(RUN_PAGE, [found.id, 20]);
  const data = rows.map((row) => presentRun(row, user.id));
  const body = { selfURI: `/me/projects/${found.id}/runs`, data, total: Number(total), offset: 0, limit: 20 };
  return answer(request, reply, 'list', body);
});
app.get<{ Params: { projectId: string } }>('/api/me/projects/:projectId', async (request, reply) => {
  const user = await caller(request, reply);
  if (user === undefined) return reply;
  const found = await project(user, Number(request.params.projectId), reply);
  if (found === undefined) return reply;
  const [runs] = await query(PROJECT_RUN_COUNTS, [ids(found.id as number)]);
  const [outcomes] = await query(PROJECT_OUTCOMES, [ids(found.id as number), 'EXCLUDED']);
  const all = Number(outcomes?.all ?? 0);
  const body = {
    id: found.id,
    selfURI: `/users/${user.id}/projects/${found.id}`,
    name: found.name,
    description: found.description,
    type: found.type,
    osType: found.os_type,
    createTime: Number(found.create_time),
    archiveTime: found.archive_time,
    archivingStrategy: found.archiving_strategy,
    archivingItemCount: found.archiving_item_count,
    common: Boolean(found.common),
    shared: Boolean(found.shared),
    sharedWithCaller: false,
    sharedById: null,
    sharedByEmail: null,
    readOnly: Boolean(found.read_only),
    successRatio: all === 0 ? 0 : Number(outcomes!.succeeded) / all,
    userId: found.user_id,
    userEmail: found.owner_email,
    rowIndex: null,
    testRunCount: Number(runs?.count ?? 0),
  };
  return answer(request, reply, 'apiProject', body);
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${READY}${JSON.stringify({ url })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
