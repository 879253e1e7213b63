/**
 * The real-device drivers through real processes: a `devicecloud serve`, a `devicecloud agent
 * --driver adb` whose ADB server is the fake one of the tests (it speaks the wire protocol, so the
 * agent cannot tell it from `adb start-server`), and a `devicecloud agent --driver ios` whose go-ios
 * is the fake `ios` executable. Runs go through the public API only, as a CI script's would, and
 * end with the test cases the drivers read from the phones' output. No phone is involved; the
 * same drivers on hardware: test/hardware/.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExamples } from '../../examples/build.ts';
import { type RunningProcess, cliBudget, startCli } from '../support/cli.ts';
import { Cloud, type CloudUser, until } from '../support/cloud.ts';
import { testApk } from '../support/fake-adb/apks.ts';
import { FakeAdbServer, GOOGLE_USERS, recording } from '../support/fake-adb/index.ts';
import { FAKE_IOS, FakeIos, LAB_DEVICES, ipa, runnerZip, signingFolder } from '../support/fake-ios/index.ts';

const INSTRUMENTATION = 1;
const XCUITEST = 12;
const IOS_CRAWLER = 18;
const PIXEL = '28141FDH2000JY';
const IPHONE = LAB_DEVICES[0]!;

// The waits below give up when the phones and the agents stop moving, not at a fixed time: under
// load a run and its cleaning take minutes, and the test's timeout is only a backstop.
describe(
  'devicecloud agent --driver adb|ios through real processes (fake ADB server, fake go-ios)',
  { timeout: 10 * 60_000 },
  () => {
    const cloud = new Cloud(['--heartbeat-ms', '500']);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-e2e-drivers-'));
    const agents: RunningProcess[] = [];
    let adb: FakeAdbServer;
    let goIos: FakeIos;
    let user: CloudUser;

    /** An agent process of its own: Cloud's helper starts virtual ones only. */
    async function startAgent(name: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<RunningProcess> {
      const { token } = await cloud.admin(['create-agent-token', '--name', name]);
      const agent = startCli(['agent', '--server', cloud.url, '--data-dir', path.join(scratch, name), ...args], {
        DEVICECLOUD_AGENT_TOKEN: token,
        ...env,
      });
      agents.push(agent);
      await agent.waitFor(/registered 1 device/);
      return agent;
    }

    /**
     * What the phones were asked, less the health checks the agents repeat while idle: it grows
     * while runs and cleaning go on, and stops when they are stuck.
     */
    const progress = () => [
      // While it reboots the phone is gone from the fake server: that is progress too.
      adb.devices.has(PIXEL)
        ? adb.device(PIXEL).commands.filter((command) => !/dumpsys battery|sys\.boot_completed/.test(command)).length
        : 'rebooting',
      goIos.calls().filter((args) => args[0] !== 'list' && args[0] !== 'info').length,
    ];

    /** The run, once it has finished, and its only device session. */
    async function finished(runId: number) {
      const run = await until(
        () => user.api('GET', `/v2/runs/${runId}`),
        (answer) => answer.body.state === 'FINISHED',
        60_000,
        progress,
      );
      const sessions = (await user.api('GET', `/v2/runs/${runId}/device-sessions`)).body.data;
      expect(sessions).toHaveLength(1);
      return {
        run: run.body,
        session: sessions[0],
        base: `/me/projects/${run.body.projectId}/runs/${runId}/device-sessions/${sessions[0].id}`,
      };
    }

    /** A device as the API shows it, by its OS (each agent has one). */
    async function deviceOf(osType: 'ANDROID' | 'IOS') {
      const devices = (await user.api('GET', `/v2/devices?filter=osType_eq_${osType}`)).body.data;
      expect(devices).toHaveLength(1);
      return devices[0];
    }

    beforeAll(async () => {
      adb = await FakeAdbServer.start([{ serial: PIXEL }]);
      goIos = new FakeIos(path.join(scratch, 'fake-ios'), [IPHONE]);
      await cloud.startServer();
      user = await cloud.user('devices@example.com', 'GOLD');
      // Exactly what a device host sets: the ADB server's address, go-ios and the signing folder.
      await startAgent('android-host', ['--driver', 'adb'], { ADB_SERVER_SOCKET: `tcp:127.0.0.1:${adb.port}` });
      await startAgent(
        'ios-host',
        ['--driver', 'ios', '--ios-bin', FAKE_IOS, '--ios-signing', signingFolder(path.join(scratch, 'signing'))],
        goIos.env,
      );
    }, cliBudget(6)); // serve, create-user, and a create-agent-token and an agent per host

    afterAll(async () => {
      for (const agent of agents) await agent.stop();
      await cloud.stop();
      await adb?.close();
      fs.rmSync(scratch, { recursive: true, force: true });
    }, 60_000);

    it('registers the phones as the drivers describe them', async () => {
      expect(await deviceOf('ANDROID')).toMatchObject({
        displayName: 'Google Pixel 7',
        manufacturer: 'Google',
        softwareVersion: { releaseVersion: '14', apiLevel: 34 },
      });
      expect(await deviceOf('IOS')).toMatchObject({
        displayName: 'Apple iPhone 15',
        manufacturer: 'Apple',
        softwareVersion: { releaseVersion: IPHONE.productVersion },
      });
      expect(adb.requests).toContain('host:track-devices');
    });

    it('runs an instrumentation run on the adb phone with device settings: test cases from `am instrument -r`, samples, screenshots, logcat; cleaning puts the phone back', async () => {
      const examples = await buildExamples(path.join(scratch, 'examples'));
      const app = await user.upload(examples['sample-app.apk']!);
      const tests = await user.upload((await testApk(scratch, 'com.devicecloud.failing.test')).path);
      const pixel = adb.device(PIXEL);
      // What the phone looked like while its tests ran: the run's Wi-Fi and Google account must be applied by then.
      let wifiDuringTests: string | undefined;
      let accountsDuringTests: string[] = [];
      const email = 'qa.devicecloud@gmail.com';
      const password = GOOGLE_USERS[email]!.password;
      pixel.instrumentations.set('com.devicecloud.failing.test', {
        output: (device) => {
          wifiDuringTests = device.settings.get('global/wifi_on');
          accountsDuringTests = device.accounts.map((account) => account.name);
          return recording('instrument-failing.txt');
        },
        durationMs: 1600,
      });
      const boots = pixel.boots;
      const device = await deviceOf('ANDROID');
      const started = await user.api('POST', '/v2/runs', {
        osType: 'ANDROID',
        frameworkId: INSTRUMENTATION,
        projectName: 'adb e2e',
        deviceIds: [device.id],
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
        wifiEnabled: false,
        googleAccountEmail: email,
        googleAccountPassword: password,
      });
      expect(started.status, JSON.stringify(started.body)).toBe(201);

      const { session, base } = await finished(started.body.id);
      expect(session).toMatchObject({
        state: 'FAILED',
        testCaseAllCount: 5,
        testCasePassedCount: 2,
        testCaseFailedCount: 1,
        testCaseSkippedCount: 2,
      });
      const cases = (await user.api('GET', `${base}/test-case-runs`)).body.data;
      expect(
        cases.map(
          (testCase: { className: string; methodName: string; result: string }) =>
            `${testCase.className}#${testCase.methodName}:${testCase.result}`,
        ),
      ).toEqual([
        'com.devicecloud.sample.LoginTest#testValidLogin:PASSED',
        'com.devicecloud.sample.CheckoutTest#testAddToCart:PASSED',
        'com.devicecloud.sample.CheckoutTest#testPayWithExpiredCard:FAILED',
        'com.devicecloud.sample.CheckoutTest#testPayWithNfc:SKIPPED',
        'com.devicecloud.sample.CheckoutTest#testPayLater:SKIPPED',
      ]);
      expect(cases[2]).toMatchObject({
        errorMessage: 'java.lang.AssertionError: expected:<PAID> but was:<DECLINED>',
        stacktrace: expect.stringContaining('CheckoutTest.java:58'),
      });
      expect(wifiDuringTests).toBe('0');
      expect(accountsDuringTests).toEqual([email]);
      expect(pixel.commands).toContain(
        "'am' 'instrument' '-r' '-w' 'com.devicecloud.failing.test/androidx.test.runner.AndroidJUnitRunner'",
      );

      const samples = (await user.api('GET', `/v2/device-sessions/${session.id}/performance`)).body;
      expect(samples.length).toBeGreaterThan(0);
      expect(samples[0]).toMatchObject({
        packageName: 'com.devicecloud.sample',
        cpuUsage: expect.any(Number),
        memUsage: expect.any(Number),
      });
      const shots = (await user.api('GET', `${base}/screenshots`)).body.data;
      expect(shots.map((shot: { originalName: string }) => shot.originalName).sort()).toEqual([
        '01-failed-testPayWithExpiredCard.png',
        '02-final.png',
      ]);
      const log = await user.text(`${base}/logs`);
      expect(log).toContain('ActivityManager: Start proc');
      // The password went to the phone's `input text` only: not to the run's log, the API, or the agent's own log.
      const shown = [
        log,
        JSON.stringify((await user.api('GET', `/v2/runs/${started.body.id}`)).body),
        JSON.stringify(session),
        agents[0]!.output(),
      ].join('\n');
      expect(agents[0]!.output()).toContain(`the Google sign-in of ${email}: signed in`);
      for (const form of [password, password.replaceAll(' ', '%s'), JSON.stringify(password).slice(1, -1)])
        expect(shown).not.toContain(form);

      // After the run the agent cleans the phone: the installed APKs and the account go, Wi-Fi is back, one reboot.
      await until(
        async () => ({
          packages: [...pixel.packages.keys()].filter((name) => name.startsWith('com.devicecloud')),
          wifi: pixel.settings.get('global/wifi_on'),
          accounts: pixel.accounts.length,
          boots: pixel.boots,
        }),
        (phone) =>
          phone.packages.length === 0 && phone.wifi === '1' && phone.accounts === 0 && phone.boots === boots + 1,
        undefined,
        progress,
      );
      await until(
        () => deviceOf('ANDROID'),
        (shown) => shown.available === true,
        undefined,
        progress,
      );
    });

    it('runs the iOS crawler on the iOS phone: re-signed, WebDriverAgent through go-ios, one test case a screen; cleaning uninstalls', async () => {
      const appFile = path.join(scratch, 'shop.ipa');
      fs.writeFileSync(
        appFile,
        await ipa({
          bundleId: 'com.devicecloud.shop',
          executable: 'Shop',
          screens: ['Home', 'Settings', 'About'],
          signIn: true,
        }),
      );
      const app = await user.upload(appFile);
      const device = await deviceOf('IOS');
      const boots = goIos.device(IPHONE.udid).boots ?? 0;
      goIos.clearCalls();
      const started = await user.api('POST', '/v2/runs', {
        osType: 'IOS',
        frameworkId: IOS_CRAWLER,
        projectName: 'ios crawler e2e',
        deviceIds: [device.id],
        files: [{ id: app.id, action: 'INSTALL' }],
        applicationUsername: 'qa',
        applicationPassword: 'secret',
      });
      expect(started.status, JSON.stringify(started.body)).toBe(201);

      const { session, base } = await finished(started.body.id);
      expect(session.state).toBe('SUCCEEDED');
      const cases = (await user.api('GET', `${base}/test-case-runs`)).body.data;
      expect(
        cases.map((testCase: { methodName: string; result: string }) => `${testCase.methodName}:${testCase.result}`),
      ).toEqual(['sign in:PASSED', 'launch (Home):PASSED', 'screen: Settings:PASSED', 'screen: About:PASSED']);
      const shots = (await user.api('GET', `${base}/screenshots`)).body.data;
      // The agent uploads artifacts side by side: the listing's order is theirs, the names say the crawl's.
      expect(shots.map((shot: { originalName: string }) => shot.originalName).sort()).toEqual([
        '01-Home.png',
        '02-Settings.png',
        '03-About.png',
      ]);
      // Installed re-signed with the service's profile, not the app's own.
      const signed = goIos.calls().filter((args) => args[0] === 'sign');
      expect(signed).toEqual([
        expect.arrayContaining([`--profile=${path.join(scratch, 'signing', 'profile.mobileprovision')}`]),
      ]);
      expect(goIos.calls().some((args) => args[0] === 'runwda')).toBe(true);

      await until(
        async () => ({
          apps: Object.keys(goIos.device(IPHONE.udid).apps).filter((bundleId) =>
            bundleId.startsWith('com.devicecloud'),
          ),
          boots: goIos.device(IPHONE.udid).boots ?? 0,
        }),
        (phone) => phone.apps.length === 0 && phone.boots === boots + 1,
        undefined,
        progress,
      );
      await until(
        () => deviceOf('IOS'),
        (shown) => shown.available === true,
        undefined,
        progress,
      );
    });

    it("runs an XCUITest run on the iOS phone: re-signed, test cases from go-ios' results; cleaning uninstalls", async () => {
      const appFile = path.join(scratch, 'sample-app.ipa');
      fs.writeFileSync(
        appFile,
        await ipa({ bundleId: 'com.devicecloud.sample', executable: 'Sample', displayName: 'Sample Shop' }),
      );
      const runnerFile = path.join(scratch, 'SampleUITests-Runner.zip');
      fs.writeFileSync(
        runnerFile,
        await runnerZip({
          bundleId: 'com.devicecloud.sample.SampleUITests.xctrunner',
          xctest: 'SampleUITests.xctest',
          scenario: 'failing',
        }),
      );
      const app = await user.upload(appFile);
      const tests = await user.upload(runnerFile);
      const device = await deviceOf('IOS');
      goIos.clearCalls();
      const started = await user.api('POST', '/v2/runs', {
        osType: 'IOS',
        frameworkId: XCUITEST,
        projectName: 'ios e2e',
        deviceIds: [device.id],
        files: [
          { id: app.id, action: 'INSTALL' },
          { id: tests.id, action: 'RUN_TEST' },
        ],
      });
      expect(started.status, JSON.stringify(started.body)).toBe(201);

      const { session, base } = await finished(started.body.id);
      expect(session.state).toBe('FAILED');
      const cases = (await user.api('GET', `${base}/test-case-runs`)).body.data;
      const failed = cases.filter((testCase: { result: string }) => testCase.result === 'FAILED');
      expect(cases.length).toBeGreaterThan(1);
      expect(failed).toHaveLength(1);
      expect(failed[0].errorMessage).toBeTruthy();
      const signed = goIos.calls().filter((args) => args[0] === 'sign');
      expect(signed).toHaveLength(2);
      for (const args of signed)
        expect(args).toContain(`--profile=${path.join(scratch, 'signing', 'profile.mobileprovision')}`);

      await until(
        async () =>
          Object.keys(goIos.device(IPHONE.udid).apps).filter((bundleId) => bundleId.startsWith('com.devicecloud')),
        (left) => left.length === 0,
        undefined,
        progress,
      );
      await until(
        () => deviceOf('IOS'),
        (shown) => shown.available === true,
        undefined,
        progress,
      );
    });
  },
);
