/**
 * The devices page's live thumbnails (docs/api.md#device-screens), played against a real agent
 * with a virtual device: each user is shown the pictures of the sessions they may see (their own
 * interactive session's newest frame; a shared project's running session's newest screenshot) and
 * nothing of anyone else's: another tenant's busy devices are busy in the device list, with no
 * session and no picture, and every picture URL of theirs is a 404.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../support/cloud.ts';
import { ENGINES } from '../support/engines.ts';
import * as fixtures from '../support/fixtures.ts';
import { type Harness, type TestUser, createHarness } from '../support/harness.ts';
import { type VirtualHost, listenWithVirtualHost } from '../support/virtual-host.ts';

interface Screen {
  deviceSessionURI: string;
  deviceId: number;
  deviceSessionId: number;
  type: string;
  picture: string | null;
}

describe.each(ENGINES)('device screens (%s)', (engine) => {
  let h: Harness;
  let host: VirtualHost;
  let alice: TestUser;
  let bob: TestUser;
  let mallory: TestUser;

  beforeEach(async () => {
    h = await createHarness(engine, { limits: { heartbeatMs: 200, claimWaitMs: 200 } });
    host = await listenWithVirtualHost(h, 'screens');
    [alice, bob, mallory] = [await h.user({ plan: 'GOLD' }), await h.user(), await h.user()];
  });
  afterEach(async () => host.stop());

  const screens = async (user: TestUser): Promise<Screen[]> => {
    const answer = await user.call('GET', '/api/v2/me/device-screens', { json: true });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data as Screen[];
  };
  /** A picture URL is absolute; the harness answers its path. */
  const fetchPicture = (user: TestUser, url: string) => {
    const { pathname, search } = new URL(url);
    return user.call('GET', `${pathname}${search}`);
  };

  it("shows each user the pictures of the sessions they may see, and nothing of another's", async () => {
    // Alice's interactive session on the virtual device: its frames come from the agent.
    const reserved = await alice.call('POST', '/api/me/device-sessions', {
      json: true,
      form: { deviceId: String(host.deviceId) },
    });
    expect(reserved.status, reserved.text).toBe(201);
    const interactive = reserved.body.id as number;
    const framed = await until(
      () => screens(alice),
      (list) => list.some((screen) => screen.deviceSessionId === interactive && screen.picture !== null),
      20_000,
    );

    // Alice's run on a second device, in a project she shares with Bob, with a screenshot so far.
    const pixel = await fixtures.device(h.ctx, 'Pixel 8');
    const projectId = (await alice.call('POST', '/api/me/projects', { json: true, form: { name: 'Shop' } })).body.id;
    const run = await fixtures.run(h.ctx, alice.user, projectId, [pixel], ['RUNNING']);
    const [automatic] = await h.ctx.store.deviceRuns.ofRuns([run.id]);
    const screenshot = await fixtures.file(h.ctx, alice.user, {
      name: 'cart.png',
      inputType: 'DATA',
      bytes: 'the cart screen',
      outputOf: automatic!.id,
      tags: ['screenshot'],
      mimetype: 'image/png',
    });
    const shared = await alice.call('POST', `/api/me/projects/${projectId}/share`, {
      json: true,
      form: { email: bob.user.email },
    });
    expect(shared.status, shared.text).toBe(200);
    // Even with her interactive sessions' project shared, an interactive session stays its holder's alone.
    const sessionsProject = (await h.ctx.store.deviceRuns.findById(interactive))!.projectId;
    const sharedSessions = await alice.call('POST', `/api/me/projects/${sessionsProject}/share`, {
      json: true,
      form: { email: bob.user.email },
    });
    expect(sharedSessions.status, sharedSessions.text).toBe(200);

    const own = await screens(alice);
    const byDevice = new Map(own.map((screen) => [screen.deviceId, screen]));
    expect([...byDevice.keys()].sort()).toEqual([host.deviceId, pixel.id].sort());
    expect(byDevice.get(host.deviceId)).toMatchObject({ deviceSessionId: interactive, type: 'MANUAL' });
    expect(byDevice.get(pixel.id)).toMatchObject({ deviceSessionId: automatic!.id, type: 'AUTOMATIC' });
    const frameUrl = framed.find((screen) => screen.deviceSessionId === interactive)!.picture!;
    expect(frameUrl).toMatch(new RegExp(`/api/v2/device-sessions/${interactive}/frame\\?seq=\\d+$`));
    const frame = await fetchPicture(alice, frameUrl);
    expect(frame.status, frame.text).toBe(200);
    expect(frame.headers['content-type']).toBe('image/png');
    expect(frame.text.slice(1, 4)).toBe('PNG');
    const screenshotUrl = byDevice.get(pixel.id)!.picture!;
    expect(screenshotUrl).toMatch(new RegExp(`/device-sessions/${automatic!.id}/screenshots/${screenshot.id}$`));
    expect((await fetchPicture(alice, screenshotUrl)).text).toBe('the cart screen');
    // A run's session has no live frame (the agent streams only interactive ones).
    const none = await alice.call('GET', `/api/me/device-sessions/${automatic!.id}/frame`, { json: true });
    expect([none.status, none.body.message]).toEqual([404, `Frame of device session ${automatic!.id} not found`]);

    // Bob reads the shared project: its running session and its picture, not Alice's own interactive session.
    const { deviceSessionURI: _, ...seen } = byDevice.get(pixel.id)!;
    expect(await screens(bob)).toEqual([
      { ...seen, deviceSessionURI: `/users/${bob.user.id}/device-sessions/${automatic!.id}` },
    ]);
    expect((await fetchPicture(bob, screenshotUrl)).text).toBe('the cart screen');
    expect((await fetchPicture(bob, frameUrl)).status).toBe(404);

    // Mallory, another tenant: both devices busy in the anonymous device list, no session, no picture.
    const devices = (await mallory.call('GET', '/api/v2/devices?limit=0', { json: true })).body.data as Array<{
      id: number;
      lockReason: string | null;
    }>;
    expect(devices.filter((device) => device.lockReason === 'TESTING').map((device) => device.id)).toContain(
      host.deviceId,
    );
    expect(await screens(mallory)).toEqual([]);
    for (const url of [frameUrl, screenshotUrl]) {
      const answer = await fetchPicture(mallory, url);
      expect(answer.status, url).toBe(404);
      expect(answer.text).not.toContain('the cart screen');
    }
    for (const id of [interactive, automatic!.id])
      expect((await mallory.call('GET', `/api/me/device-sessions/${id}/frame`, { json: true })).status).toBe(404);

    // A session with no picture yet is listed without one; one that ended leaves the list.
    await h.ctx.store.files.deleteOutputNamed(automatic!.id, 'cart.png');
    expect((await screens(alice)).find((screen) => screen.deviceId === pixel.id)?.picture).toBeNull();
    expect((await alice.call('POST', `/api/me/device-sessions/${interactive}/release`, { json: true })).status).toBe(
      200,
    );
    await until(
      () => screens(alice),
      (list) => !list.some((screen) => screen.deviceSessionId === interactive),
      20_000,
    );
  });
});
