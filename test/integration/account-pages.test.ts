/**
 * The account pages (docs/api.md#account-pages): notification subscriptions and their delivery
 * (webhook, Slack and e-mail through a fake SMTP server on loopback), preferences, statistics,
 * device usage, enums and unarchiving, on both engines, with another user trying each id.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deliverDueHooks } from '../../src/jobs/hooks.ts';
import { ENGINES } from '../support/engines.ts';
import { type FakeAgent, androidDevice, fakeAgent, testCase } from '../support/fake-agent.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, START_TIME, type TestUser, createHarness, parseXml } from '../support/harness.ts';

const SERVER_SIDE = 7;
const DAY = 86_400_000;

interface Mail {
  readonly from: string;
  readonly to: string;
  readonly data: string;
}

/** An SMTP server on loopback that takes every message (or refuses recipients), keeping what it got. */
async function smtpServer(options: { refuseRecipients?: boolean } = {}) {
  const mails: Mail[] = [];
  const logins: string[] = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let from = '';
    let to = '';
    let inData = false;
    socket.write('220 fake.example ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          mails.push({ from, to, data: buffer.slice(0, end) });
          buffer = buffer.slice(end + 5);
          inData = false;
          socket.write('250 queued\r\n');
          continue;
        }
        const end = buffer.indexOf('\r\n');
        if (end < 0) return;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const verb = line.split(/[ :]/)[0]!.toUpperCase();
        // nodemailer (rightly, RFC 4954) signs in only when the server offers AUTH.
        if (verb === 'EHLO') socket.write('250-fake.example\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n');
        else if (verb === 'AUTH') {
          logins.push(Buffer.from(line.split(' ')[2] ?? '', 'base64').toString('utf8'));
          socket.write('235 welcome\r\n');
        } else if (verb === 'MAIL') {
          from = /<(.*)>/.exec(line)![1]!;
          socket.write('250 ok\r\n');
        } else if (verb === 'RCPT') {
          to = /<(.*)>/.exec(line)![1]!;
          socket.write(options.refuseRecipients ? '550 no such mailbox\r\n' : '250 ok\r\n');
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('502 not here\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    mails,
    logins,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** An endpoint on loopback that answers `status`, keeping each POST's content type and body. */
async function endpoint(status = 200) {
  const received: Array<{ contentType: string | undefined; body: string }> = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ contentType: request.headers['content-type'], body });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/notify`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe.each(ENGINES)('account pages (%s)', (engine) => {
  let h: Harness;
  let alice: TestUser;
  let bob: TestUser;
  let agent: FakeAgent;
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  let files: Array<{ id: number; action: string }>;

  beforeEach(async () => {
    smtp = await smtpServer();
    h = await createHarness(engine, {
      smtpUrl: smtp.url,
      limits: { claimWaitMs: 50, hookAllowNetworks: ['127.0.0.0/8'] },
    });
    alice = await h.user({ plan: 'GOLD' });
    bob = await h.user();
    agent = await fakeAgent(h.app, h.ctx, `host-${engine}`);
    await agent.hello([androidDevice('a1', 'Pixel 8'), androidDevice('a2', 'Galaxy S24')]);
    await agent.cleanAll();
    const app = await fixtures.file(h.ctx, alice.user, {
      name: 'app.apk',
      inputType: 'APPLICATION',
      osType: 'ANDROID',
      properties: { package_name: 'com.example' },
    });
    const tests = await fixtures.file(h.ctx, alice.user, {
      name: 'tests.zip',
      inputType: 'TEST',
      properties: { entry_script: 'run-tests.sh' },
    });
    files = [
      { id: app.id, action: 'INSTALL' },
      { id: tests.id, action: 'RUN_TEST' },
    ];
  });
  afterEach(async () => {
    await h.close();
    await smtp.close();
  });

  /** Starts a run on the given phones, lets each run `ms`, and ends them with `outcome`. */
  async function runToEnd(serials: string[], outcome: 'SUCCEEDED' | 'FAILED', ms = 60_000, projectName = 'Paged') {
    const run = await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: {
        osType: 'ANDROID',
        frameworkId: SERVER_SIDE,
        projectName,
        files,
        deviceIds: serials.map((serial) => agent.deviceIds.get(serial)),
      },
    });
    expect(run.status, run.text).toBe(201);
    const { assignments } = await agent.claim(serials);
    expect(assignments).toHaveLength(serials.length);
    h.advance(ms);
    for (const assignment of assignments)
      await agent.finish(assignment.deviceRunId, outcome, [
        testCase('a', 'PASSED'),
        testCase('b', outcome === 'SUCCEEDED' ? 'PASSED' : 'FAILED'),
      ]);
    await agent.cleanAll();
    return run.body as { id: number; projectId: number };
  }

  it('keeps subscriptions: create, list, read, change, delete, with 400s naming the field', async () => {
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Watched' } })).body;
    const made = await alice.call('POST', '/api/me/notifications', {
      json: true,
      form: {
        channel: 'email',
        destination: 'ci@example.com',
        scope: 'TEST_RUN_FAILURE',
        projectId: String(project.id),
      },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({
      selfURI: `/users/${alice.user.id}/notifications/${made.body.id}`,
      channel: 'EMAIL',
      destination: 'ci@example.com',
      scope: 'TEST_RUN_FAILURE',
      projectId: project.id,
      projectName: 'Watched',
      userId: alice.user.id,
      userEmail: alice.user.email,
    });
    const all = await alice.call('POST', '/api/me/notifications', {
      json: true,
      form: { channel: 'WEBHOOK', destination: 'https://ci.example.com/hook', scope: 'ALL' },
    });
    expect(all.body.projectId).toBeNull();

    const list = await alice.call('GET', '/api/me/notifications?filter=channel_eq_WEBHOOK', { json: true });
    expect(list.body.data.map((item: { id: number }) => item.id)).toEqual([all.body.id]);
    expect((await alice.call('GET', '/api/me/notifications?search=watched', { json: true })).body.total).toBe(1);
    const xml = parseXml((await alice.call('GET', `/api/users/${alice.user.id}/notifications/${made.body.id}`)).text);
    expect(xml.apiNotification.destination).toBe('ci@example.com');

    const changed = await alice.call('POST', `/api/me/notifications/${made.body.id}`, {
      json: true,
      form: { scope: 'ALL' },
    });
    expect(changed.body).toMatchObject({ scope: 'ALL', channel: 'EMAIL', projectId: project.id });

    for (const [form, field] of [
      [{ channel: 'PIGEON', destination: 'a@example.com', scope: 'ALL' }, 'channel'],
      [{ channel: 'EMAIL', destination: 'a@example.com', scope: 'NEWS' }, 'scope'],
      [{ channel: 'EMAIL', destination: 'not an address\r\nBcc: x@example.com', scope: 'ALL' }, 'destination'],
      [{ channel: 'SLACK', destination: 'ftp://example.com/x', scope: 'ALL' }, 'destination'],
      [{ channel: 'EMAIL', scope: 'ALL' }, 'destination'],
      [{ channel: 'EMAIL', destination: 'a@example.com', scope: 'ALL', projectId: 'x' }, 'projectId'],
    ] as const) {
      const answer = await alice.call('POST', '/api/me/notifications', { json: true, form });
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.message).toContain(`'${field}'`);
    }
    const xmlError = await alice.call('POST', '/api/me/notifications', { form: { channel: 'EMAIL', scope: 'ALL' } });
    expect(String(parseXml(xmlError.text).apiExceptionMessage.statusCode)).toBe('400');

    expect((await alice.call('DELETE', `/api/me/notifications/${made.body.id}`)).status).toBe(204);
    expect((await alice.call('GET', `/api/me/notifications/${made.body.id}`, { json: true })).status).toBe(404);
    expect((await alice.call('DELETE', `/api/me/notifications/${made.body.id}`, { json: true })).status).toBe(404);
  });

  it('lists the scopes and channels as enums, and every enum at /enums', async () => {
    const scopes = await alice.call('GET', '/api/me/notifications/scopes', { json: true });
    expect(scopes.body.data).toEqual([
      { id: 0, selfURI: null, value: 'ALL' },
      { id: 1, selfURI: null, value: 'TEST_RUN' },
      { id: 2, selfURI: null, value: 'TEST_RUN_FAILURE' },
      { id: 3, selfURI: null, value: 'TEST_RUN_SUCCEEDED' },
    ]);
    const channels = await alice.call('GET', '/api/me/notifications/channels', { json: true });
    expect(channels.body.data.map((item: { value: string }) => item.value)).toEqual(['SLACK', 'EMAIL', 'WEBHOOK']);
    const enums = await alice.call('GET', '/api/v2/enums', { json: true });
    expect(enums.body.deviceRunStates).toContain('TIMEOUT');
    expect(enums.body.notificationChannels).toEqual(['SLACK', 'EMAIL', 'WEBHOOK']);
    expect(parseXml((await alice.call('GET', '/api/enums')).text).apiEnums.plans.item).toContain('GOLD');
  });

  it('refuses a webhook or Slack destination inside the server’s network', async () => {
    const strict = await createHarness(engine);
    try {
      const carol = await strict.user();
      for (const destination of ['http://127.0.0.1:9/x', 'http://localhost/x', 'http://169.254.169.254/latest']) {
        const answer = await carol.call('POST', '/api/me/notifications', {
          json: true,
          form: { channel: 'WEBHOOK', destination, scope: 'ALL' },
        });
        expect(answer.status, destination).toBe(400);
        expect(answer.body.message).toContain(`'destination'`);
      }
    } finally {
      await strict.close();
    }
  });

  it('delivers a finished run to the subscriptions whose scope and project match, by each channel', async () => {
    const hook = await endpoint();
    const slack = await endpoint();
    try {
      const subscribe = (form: Record<string, string>) =>
        alice.call('POST', '/api/me/notifications', { json: true, form });
      await subscribe({ channel: 'WEBHOOK', destination: hook.url, scope: 'TEST_RUN_FAILURE' });
      await subscribe({ channel: 'SLACK', destination: slack.url, scope: 'ALL' });
      await subscribe({ channel: 'EMAIL', destination: 'qa@example.com', scope: 'TEST_RUN' });
      // Not for this run: the wrong result, and another project.
      await subscribe({ channel: 'EMAIL', destination: 'happy@example.com', scope: 'TEST_RUN_SUCCEEDED' });
      const other = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Other' } })).body;
      await subscribe({
        channel: 'EMAIL',
        destination: 'other@example.com',
        scope: 'ALL',
        projectId: String(other.id),
      });
      // Bob's subscriptions never hear of Alice's runs.
      await bob.call('POST', '/api/me/notifications', {
        json: true,
        form: { channel: 'EMAIL', destination: 'bob@example.com', scope: 'ALL' },
      });

      const run = await runToEnd(['a1'], 'FAILED');
      const logged: string[] = [];
      expect(await deliverDueHooks({ ctx: h.ctx, log: (line) => logged.push(line) })).toBe(3);
      expect(logged).toEqual([]);
      expect(hook.received).toHaveLength(1);
      expect(Object.fromEntries(new URLSearchParams(hook.received[0]!.body))).toEqual({
        testRunId: String(run.id),
        projectId: String(run.projectId),
        status: 'FINISHED',
        result: 'FAILED',
      });
      expect(slack.received).toEqual([
        { contentType: 'application/json', body: JSON.stringify({ text: `Test run ${run.id} finished: FAILED` }) },
      ]);
      expect(smtp.mails.map((mail) => mail.to)).toEqual(['qa@example.com']);
      expect(smtp.mails[0]!.from).toBe('devicecloud@example.com');
      expect(smtp.mails[0]!.data).toContain(`Subject: Test run ${run.id} finished: FAILED`);
      expect(await deliverDueHooks({ ctx: h.ctx, log: () => undefined })).toBe(0);
    } finally {
      await hook.close();
      await slack.close();
    }
  });

  it('sends a test message now, and says clearly when it cannot', async () => {
    const hook = await endpoint();
    const broken = await endpoint(500);
    try {
      const make = async (form: Record<string, string>) =>
        (await alice.call('POST', '/api/me/notifications', { json: true, form })).body.id as number;
      const mail = await make({ channel: 'EMAIL', destination: 'qa@example.com', scope: 'ALL' });
      const tested = await alice.call('POST', `/api/me/notifications/${mail}/test`, { json: true });
      expect(tested.status, tested.text).toBe(200);
      expect(tested.body.id).toBe(mail);
      expect(smtp.mails).toHaveLength(1);
      expect(smtp.mails[0]!.data).toContain('Subject: devicecloud test notification (ALL)');

      const web = await make({ channel: 'WEBHOOK', destination: hook.url, scope: 'ALL' });
      expect((await alice.call('POST', `/api/me/notifications/${web}/test`, { json: true })).status).toBe(200);
      expect(Object.fromEntries(new URLSearchParams(hook.received[0]!.body))).toEqual({
        test: 'true',
        notificationId: String(web),
      });
      const failing = await make({ channel: 'WEBHOOK', destination: broken.url, scope: 'ALL' });
      const refused = await alice.call('POST', `/api/me/notifications/${failing}/test`, { json: true });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain('answered 500');
    } finally {
      await hook.close();
      await broken.close();
    }

    const refusing = await smtpServer({ refuseRecipients: true });
    const noSmtp = await createHarness(engine, { smtpUrl: undefined });
    const picky = await createHarness(engine, { smtpUrl: refusing.url });
    // A port nothing listens on: the server was there a moment ago and is gone.
    const gone = await smtpServer();
    await gone.close();
    const unreachable = await createHarness(engine, { smtpUrl: gone.url });
    try {
      for (const [harness, message, naming] of [
        [noSmtp, 'No SMTP server is configured', '--smtp-url'],
        [picky, '550 no such mailbox', 'destination qa@example.com'],
        [unreachable, 'ECONNREFUSED', 'destination qa@example.com'],
      ] as const) {
        const carol = await harness.user();
        const id = (
          await carol.call('POST', '/api/me/notifications', {
            json: true,
            form: { channel: 'EMAIL', destination: 'qa@example.com', scope: 'ALL' },
          })
        ).body.id;
        const answer = await carol.call('POST', `/api/me/notifications/${id}/test`, { json: true });
        expect(answer.status).toBe(400);
        expect(answer.body.message).toContain(message);
        expect(answer.body.message).toContain(naming);
      }
      expect(refusing.mails).toEqual([]);
    } finally {
      await noSmtp.close();
      await picky.close();
      await unreachable.close();
      await refusing.close();
    }
  });

  it('signs in to the SMTP server with the user and password of its URL', async () => {
    const server = await smtpServer();
    const signed = await createHarness(engine, { smtpUrl: `smtp://ci%40corp:p%C3%A4ss@127.0.0.1:${server.port}` });
    try {
      const carol = await signed.user();
      const id = (
        await carol.call('POST', '/api/me/notifications', {
          json: true,
          form: { channel: 'EMAIL', destination: 'qa@example.com', scope: 'ALL' },
        })
      ).body.id;
      expect((await carol.call('POST', `/api/me/notifications/${id}/test`, { json: true })).status).toBe(200);
      expect(server.logins).toEqual(['\0ci@corp\0päss']);
      expect(server.mails.map((mail) => mail.to)).toEqual(['qa@example.com']);
    } finally {
      await signed.close();
      await server.close();
    }
  });

  it('keeps the preferred test timeout, used by runs started without one', async () => {
    const initial = await alice.call('GET', '/api/me/preferences', { json: true });
    expect(initial.body).toMatchObject({
      id: alice.user.id,
      testTimeout: 600,
      defaultTestTimeout: 600,
      httpSessionMaxInactiveInterval: 43_200,
    });
    // Sent back whole, as the clients do: the read-only fields are ignored.
    const changed = await alice.call('POST', '/api/me/preferences', {
      json: true,
      body: { ...initial.body, testTimeout: 1200 },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.testTimeout).toBe(1200);
    expect((await bob.call('GET', '/api/me/preferences', { json: true })).body.testTimeout).toBe(600);

    for (const [form, field] of [
      [{ testTimeout: '999999' }, 'testTimeout'],
      [{ testTimeout: 'soon' }, 'testTimeout'],
      [{ httpSessionMaxInactiveInterval: '60' }, 'httpSessionMaxInactiveInterval'],
    ] as const) {
      const answer = await alice.call('POST', '/api/me/preferences', { json: true, form });
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body.message).toContain(`'${field}'`);
    }

    await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Timed', files },
    });
    const { assignments } = await agent.claim(['a1']);
    expect(assignments[0]!.timeoutSeconds).toBe(1200);
  });

  it('counts runs, sessions, test cases and device time per device and per day', async () => {
    const empty = await alice.call('GET', '/api/me/statistics', { json: true });
    expect(empty.body).toMatchObject({
      totalTestRuns: 0,
      devicesUsed: 0,
      overallTestCaseSuccessRatio: 0,
      deviceTime: 0,
    });

    await runToEnd(['a1', 'a2'], 'SUCCEEDED', 60_000);
    h.advance(DAY);
    const dayTwo = Math.floor((START_TIME + DAY + 60_000) / DAY) * DAY;
    await runToEnd(['a1'], 'FAILED', 30_000);
    // A run still waiting for a device: counted as running, no device time.
    await alice.call('POST', '/api/v2/runs', {
      json: true,
      body: { osType: 'ANDROID', frameworkId: SERVER_SIDE, projectName: 'Queued', files },
    });
    // Bob's own run is not Alice's.
    const bobProject = (await bob.call('POST', '/api/me/projects', { json: true, form: { name: 'Bob' } })).body;
    const device = await fixtures.device(h.ctx, 'Bob phone');
    await fixtures.run(h.ctx, bob.user, bobProject.id, [device], ['FAILED']);

    const stats = await alice.call('GET', '/api/me/statistics', { json: true });
    expect(stats.body).toEqual({
      id: alice.user.id,
      selfURI: `/users/${alice.user.id}/statistics`,
      totalTestRuns: 3,
      runningTestRuns: 1,
      devicesUsed: 2,
      overallTestCaseSuccessRatio: 5 / 6,
      totalDeviceSessions: 3,
      succeededDeviceSessions: 2,
      failedDeviceSessions: 1,
      totalTestCases: 6,
      passedTestCases: 5,
      failedTestCases: 1,
      deviceTime: 60_000 * 2 + 30_000,
      // Her projects whatever the period (the runs' and the queued one's); accounts have one user.
      allTimeProjects: (await alice.call('GET', '/api/me/projects?limit=1', { json: true })).body.total,
      additionalUsers: 0,
    });
    const firstDay = await alice.call('GET', `/api/me/statistics?endTime=${START_TIME + DAY}`, { json: true });
    expect(firstDay.body).toMatchObject({ totalTestRuns: 1, totalDeviceSessions: 2, deviceTime: 120_000 });
    expect(firstDay.body.allTimeProjects).toBe(stats.body.allTimeProjects);
    expect(stats.body.allTimeProjects).toBeGreaterThan(0);
    const badPeriod = await alice.call('GET', '/api/me/statistics?startTime=yesterday', { json: true });
    expect(badPeriod.status).toBe(400);
    expect(badPeriod.body.message).toContain(`'startTime'`);

    const usage = await alice.call('GET', '/api/me/device-usage', { json: true });
    expect(usage.status, usage.text).toBe(200);
    const pixel = agent.deviceIds.get('a1')!;
    const galaxy = agent.deviceIds.get('a2')!;
    const dayOne = Math.floor(START_TIME / DAY) * DAY;
    expect(usage.body.total).toBe(2);
    expect(usage.body.data.map((item: { id: number }) => item.id)).toEqual([pixel, galaxy]);
    expect(usage.body.data[0]).toMatchObject({
      device: { id: pixel, displayName: 'Pixel 8' },
      totalDeviceSessions: 2,
      failedDeviceSessions: 1,
      deviceTime: 90_000,
      days: [
        { day: dayOne, deviceSessions: 1, deviceTime: 60_000 },
        { day: dayTwo, deviceSessions: 1, deviceTime: 30_000 },
      ],
    });
    const sorted = await alice.call('GET', '/api/me/device-usage?sort=deviceName_a&limit=1', { json: true });
    expect(sorted.body.data.map((item: { id: number }) => item.id)).toEqual([galaxy]);
    expect(sorted.body.next).toContain('offset=1');
    const failing = await alice.call('GET', '/api/me/device-usage?filter=failedDeviceSessions_gt_0', { json: true });
    expect(failing.body.data.map((item: { id: number }) => item.id)).toEqual([pixel]);
    expect((await alice.call('GET', '/api/me/device-usage?filter=colour_eq_red', { json: true })).status).toBe(400);
    const xml = parseXml((await alice.call('GET', `/api/me/device-usage?startTime=${START_TIME + DAY}`)).text);
    expect(String(xml.apiList.total)).toBe('1');

    expect((await bob.call('GET', '/api/me/device-usage', { json: true })).body.total).toBe(0);
    expect((await bob.call('GET', '/api/me/statistics', { json: true })).body).toMatchObject({
      totalTestRuns: 1,
      totalDeviceSessions: 0,
    });
  });

  it('unarchives a project the retention job archived, which then keeps it', async () => {
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Idle' } })).body;
    h.advance(91 * DAY);
    const retention = h.ctx.store.retention;
    expect(await retention.emptyUnusedProjects(h.ctx.clock() - 90 * DAY, h.ctx.clock(), 10)).toEqual([
      { id: project.id, files: 0 },
    ]);
    expect((await alice.call('GET', `/api/me/projects/${project.id}`, { json: true })).body.archiveTime).toBe(
      h.ctx.clock(),
    );
    h.advance(1000);
    const back = await alice.call('POST', `/api/me/projects/${project.id}/unarchive`, { json: true });
    expect(back.status, back.text).toBe(200);
    expect(back.body).toMatchObject({ id: project.id, archiveTime: null });
    expect(await retention.emptyUnusedProjects(h.ctx.clock() - 90 * DAY, h.ctx.clock(), 10)).toEqual([]);
    h.advance(91 * DAY);
    expect(await retention.emptyUnusedProjects(h.ctx.clock() - 90 * DAY, h.ctx.clock(), 10)).toHaveLength(1);
  });

  it('answers 404 to another user for every subscription and project id of these pages', async () => {
    const project = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Private' } })).body;
    const id = (
      await alice.call('POST', '/api/me/notifications', {
        json: true,
        form: { channel: 'EMAIL', destination: 'alice-secret@example.com', scope: 'ALL' },
      })
    ).body.id;
    for (const [method, url] of [
      ['GET', `/api/me/notifications/${id}`],
      ['POST', `/api/me/notifications/${id}`],
      ['DELETE', `/api/me/notifications/${id}`],
      ['POST', `/api/me/notifications/${id}/test`],
      ['GET', `/api/users/${alice.user.id}/notifications`],
      ['GET', `/api/users/${alice.user.id}/statistics`],
      ['GET', `/api/users/${alice.user.id}/device-usage`],
      ['GET', `/api/users/${alice.user.id}/preferences`],
      ['POST', `/api/me/projects/${project.id}/unarchive`],
    ] as const) {
      const answer = await bob.call(method, url, { json: true, form: method === 'GET' ? undefined : { scope: 'ALL' } });
      expect(answer.status, `${method} ${url}`).toBe(404);
      expect(answer.text).not.toContain('alice-secret');
    }
    // Nor may Bob subscribe to Alice's project.
    const hijack = await bob.call('POST', '/api/me/notifications', {
      json: true,
      form: { channel: 'EMAIL', destination: 'bob@example.com', scope: 'ALL', projectId: String(project.id) },
    });
    expect(hijack.status).toBe(404);
    expect((await bob.call('GET', '/api/me/notifications', { json: true })).body.total).toBe(0);
    expect(smtp.mails).toEqual([]);
    expect((await alice.call('GET', `/api/me/notifications/${id}`, { json: true })).body.scope).toBe('ALL');
  });
});
