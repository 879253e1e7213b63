/**
 * A user who owns one of everything the API has ids for (project, config parameter, run and its
 * device runs, input and output files, device group, recording, notification subscription, system property), so that generated requests and
 * authorization checks reach handlers with ids that exist rather than stopping at "not found".
 * Every world's files have the same bytes, so worlds share their blobs and the blob directory
 * stays small enough to compare around every request.
 */
import type { Role } from '../../src/domain/users.ts';
import * as fixtures from './fixtures.ts';
import type { Harness, TestUser } from './harness.ts';

/** Ids by path parameter name (`outputFileId` is the `fileId` of result routes). */
export type Ids = Record<string, number>;

export interface World {
  readonly user: TestUser;
  /** In the owner's access group, with which the owner's project is shared (docs/api.md#sharing). */
  readonly member: TestUser;
  readonly ids: Ids;
  /** Text only this world's owner may ever see (names, e-mail, key): never in another's answer. */
  readonly secrets: readonly string[];
}

let worlds = 0;

export async function seedWorld(h: Harness, options: { role?: Role } = {}): Promise<World> {
  worlds += 1;
  const tag = `${worlds}x${Math.random().toString(36).slice(2, 8)}`;
  const user = await h.user({ role: options.role, email: `world-${tag}@example.com` });
  const ok = async (method: string, url: string, form: Record<string, string>) => {
    const answer = await user.call(method, url, { json: true, form });
    if (answer.status >= 300) throw new Error(`seeding: ${method} ${url} answered ${answer.status} ${answer.text}`);
    return answer.body as { id: number };
  };
  const device = await fixtures.device(h.ctx, `World device ${worlds}`);
  const projectId = (await ok('POST', '/api/me/projects', { name: `Project ${tag}` })).id;
  const groupId = (await ok('POST', '/api/me/device-groups', { displayName: `Group ${tag}`, osType: 'ANDROID' })).id;
  await ok('POST', `/api/me/device-groups/${groupId}/devices`, { deviceId: String(device.id) });
  // The group also selects by one of the device's labels (docs/api.md#device-selection).
  const [label] = (await user.call('GET', `/api/devices/${device.id}/properties`, { json: true })).body.data as Array<{
    id: number;
    propertyGroupId: number;
  }>;
  await ok('POST', `/api/me/device-groups/${groupId}/selectors`, { selectorId: String(label!.id) });
  const parameterId = (
    await ok('POST', `/api/me/projects/${projectId}/config/parameters`, { key: 'K', value: `Value ${tag}` })
  ).id;
  const recordingId = (await ok('POST', '/api/me/recordings', { name: `Recording ${tag}` })).id;
  const notificationId = (
    await ok('POST', '/api/me/notifications', {
      channel: 'EMAIL',
      destination: `notify-${tag}@example.com`,
      scope: 'ALL',
      projectId: String(projectId),
    })
  ).id;
  const app = await fixtures.file(h.ctx, user.user, {
    name: 'app.apk',
    inputType: 'APPLICATION',
    osType: 'ANDROID',
    properties: { package_name: 'com.example' },
  });
  await fixtures.file(h.ctx, user.user, {
    name: 'legacy.apk',
    inputType: 'APPLICATION',
    osType: 'ANDROID',
    project: { id: projectId, slot: 'application' },
  });
  await fixtures.file(h.ctx, user.user, {
    name: 'legacy-tests.zip',
    inputType: 'TEST',
    project: { id: projectId, slot: 'test' },
  });
  await fixtures.file(h.ctx, user.user, {
    name: 'legacy-data.bin',
    inputType: 'DATA',
    project: { id: projectId, slot: 'data' },
  });
  await ok('POST', '/api/me/recorder/authorizations', {});
  // An access group with a member, sharing the project (docs/api.md#sharing).
  const member = await h.user({ email: `world-member-${tag}@example.com` });
  const accessGroupId = (await ok('POST', '/api/me/access-groups', { name: `Access ${tag}` })).id;
  await ok('POST', `/api/me/access-groups/${accessGroupId}/users`, { email: member.user.email });
  const sharedResourceId = (
    await ok('POST', `/api/me/projects/${projectId}/share`, { accessGroupId: String(accessGroupId) })
  ).id;
  // A finished device run (results to read) and a waiting one (something to abort).
  const run = await fixtures.run(h.ctx, user.user, projectId, [device], ['SUCCEEDED', 'WAITING'], {
    steps: ['WAITING', 'PREPARING', 'INSTALL', 'RUNNING', 'SENDING_RESULTS'],
  });
  const [finished] = await h.ctx.store.deviceRuns.ofRuns([run.id]);
  // A WebDriver command answered in that session (Appium client side): its command log lists it.
  const command = await h.ctx.store.webDriver.insertCommand({
    deviceRunId: finished!.id,
    method: 'GET',
    path: '/source',
    body: '',
    now: h.ctx.clock(),
  });
  await h.ctx.store.webDriver.answer(command, finished!.id, 200, '{"value":"<hierarchy/>"}', h.ctx.clock());
  // The newest frame of its screen, as an agent streams it: the session's frame route reads it.
  await h.ctx.store.liveFrames.put(finished!.id, 'image/png', Buffer.from('world frame'), h.ctx.clock(), h.ctx.clock());
  // A device run that ended had started (an agent's claim sets it): the device-usage list reads it.
  await h.database.db
    .updateTable('device_runs')
    .set({ start_time: h.ctx.clock() })
    .where('id', '=', finished!.id)
    .execute();
  // A system property, the cloud's rather than the world's (docs/api.md#properties): an operator writes it.
  const operator = await h.user({ role: 'ADMIN' });
  const property = await operator.call('POST', '/api/properties', {
    json: true,
    form: {
      name: 'CLOUD_HEADER_ANNOUNCEMENT',
      value: 'Maintenance on Sunday',
      description: 'The banner',
      fromTime: '1000',
      toTime: '2000',
    },
  });
  if (property.status !== 201)
    throw new Error(`seeding: POST /api/properties answered ${property.status} ${property.text}`);
  const screenshot = await fixtures.file(h.ctx, user.user, {
    name: 'screen.png',
    inputType: 'DATA',
    outputOf: finished!.id,
    tags: ['screenshot'],
  });
  return {
    user,
    member,
    secrets: [
      `Project ${tag}`,
      `Group ${tag}`,
      `Recording ${tag}`,
      `Value ${tag}`,
      `Access ${tag}`,
      `world-member-${tag}@example.com`,
      `world-${tag}@example.com`,
      `notify-${tag}@example.com`,
      user.key,
    ],
    ids: {
      userId: user.user.id,
      accountId: user.user.id,
      projectId,
      runId: run.id,
      deviceRunId: finished!.id,
      deviceSessionId: finished!.id,
      deviceId: device.id,
      groupId,
      labelGroupId: label!.propertyGroupId,
      labelId: label!.id,
      parameterId,
      recordingId,
      notificationId,
      propertyId: (property.body as { id: number }).id,
      fileId: app.id,
      outputFileId: screenshot.id,
      accessGroupId,
      memberId: member.user.id,
      sharedResourceId,
    },
  };
}

/** The id a path parameter takes: `fileId` after a device run or session is one of its outputs. */
export function idFor(path: string, name: string, ids: Ids): number {
  if (name === 'fileId' && /device-(runs|sessions)/.test(path)) return ids.outputFileId!;
  const id = ids[name];
  if (id === undefined)
    throw new Error(`no id for path parameter '${name}' of ${path}: add it to test/support/world.ts`);
  return id;
}

/** `path` (with `:name` or `{name}` parameters) filled with the world's ids, or with `override`'s text. */
export function fillPath(path: string, ids: Ids, override: Readonly<Record<string, string>> = {}): string {
  return path.replace(/:(\w+)|\{(\w+)\}/g, (_match, colon: string | undefined, brace: string | undefined) => {
    const name = (colon ?? brace)!;
    return override[name] ?? String(idFor(path, name, ids));
  });
}
