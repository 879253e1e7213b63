/**
 * The adb driver applying a run's device settings (Wi-Fi, locale, a Google account signed in
 * through the phone's screens) and taking them back when cleaning; reading the screen and the
 * accounts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baselinePath } from '../../src/agent/drivers/adb/baseline.ts';
import { parseAccounts } from '../../src/agent/drivers/adb/device-output.ts';
import { fixedTexts, inputTextArgument, parseUiDump, screenTitle } from '../../src/agent/drivers/adb/ui-automator.ts';
import { FakeDevice, GOOGLE_USERS, recording } from '../support/fake-adb/index.ts';
import { dumpScreen, startActivity, tap, typeText } from '../support/fake-adb/ui.ts';
import { recorder } from './conformance.ts';
import { instrumentation, adbBench, PIXEL, MOTO, LAB_ACCOUNT, adbFiles } from './adb-world.ts';

adbFiles();

describe('adb driver', () => {
  const { bench, job, until } = adbBench();

  it('applies device settings before the tests and cleaning puts them back', async () => {
    const pixel = bench.fake.device(PIXEL);
    let seen: unknown = null;
    pixel.instrumentations.set('com.devicecloud.sample.test', {
      output: (device) => {
        seen = {
          wifi: device.settings.get('global/wifi_on'),
          app: device.appLocales.get('com.devicecloud.sample'),
          tests: device.appLocales.get('com.devicecloud.sample.test'),
        };
        return recording('instrument-passing.txt');
      },
      durationMs: 200,
    });
    try {
      const result = await bench.driver.execute(
        job({ ...instrumentation('sample'), deviceSettings: { locale: 'fi_FI', wifi: false, googleAccount: null } }),
        recorder().context,
      );
      expect(result.outcome).toBe('COMPLETED');
      expect(seen).toEqual({ wifi: '0', app: 'fi-FI', tests: 'fi-FI' });
    } finally {
      pixel.instrumentations.delete('com.devicecloud.sample.test');
    }
    const cleaned = await bench.driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(cleaned.report).toContain('turned Wi-Fi on');
    expect(pixel.settings.get('global/wifi_on')).toBe('1');
    expect(pixel.appLocales.size).toBe(0);
  });

  it('says plainly which settings it cannot apply, before touching the phone', async () => {
    const motoCommands = bench.fake.device(MOTO).commands.length;
    const account = await bench.driver.execute(
      job({
        ...instrumentation('sample'),
        serial: MOTO,
        deviceSettings: { locale: null, wifi: null, googleAccount: { email: 'qa@example.com', password: 'x' } },
      }),
      recorder().context,
    );
    expect(account).toMatchObject({
      outcome: 'REFUSED',
      failReason:
        'the device settings could not be applied: signing in a Google account is automated from Android 8 (API 26); this phone runs API 24',
    });
    expect(
      bench.fake
        .device(MOTO)
        .commands.slice(motoCommands)
        .some((command) => command.includes('ADD_ACCOUNT_SETTINGS')),
    ).toBe(false);
    const untypable = await bench.driver.execute(
      job({
        ...instrumentation('sample'),
        deviceSettings: { locale: null, wifi: null, googleAccount: { email: 'qa@example.com', password: 'pässwörd' } },
      }),
      recorder().context,
    );
    expect(untypable).toMatchObject({
      outcome: 'REFUSED',
      failReason:
        'the device settings could not be applied: the password holds characters that `input text` cannot type (only printable ASCII, and not "%s")',
    });
    const old = await bench.driver.execute(
      job({
        ...instrumentation('sample'),
        serial: MOTO,
        deviceSettings: { locale: 'de_DE', wifi: null, googleAccount: null },
      }),
      recorder().context,
    );
    expect(old).toMatchObject({
      outcome: 'REFUSED',
      failReason: expect.stringContaining(
        'below Android 13 the locale can only be set as the system locale, which needs a rooted phone',
      ),
    });
    expect([...bench.fake.device(MOTO).packages.keys()]).not.toContain('com.devicecloud.sample');
  });

  it('sets the system locale on a rooted pre-13 phone with a reboot, and cleaning sets it back', async () => {
    bench.fake.plug({ serial: 'ROOTEDMOTO', model: 'moto-g5', rooted: true });
    await until(async () => (await bench.driver.listDevices()).some((device) => device.serial === 'ROOTEDMOTO'));
    const rooted = bench.fake.device('ROOTEDMOTO');
    expect((await bench.driver.clean('ROOTEDMOTO')).ok).toBe(true);
    const boots = rooted.boots;
    const result = await bench.driver.execute(
      job({
        ...instrumentation('sample'),
        serial: 'ROOTEDMOTO',
        deviceSettings: { locale: 'de_DE', wifi: null, googleAccount: null },
      }),
      recorder().context,
    );
    expect(result.outcome).toBe('COMPLETED');
    expect(rooted.boots).toBe(boots + 1);
    expect(rooted.props.get('persist.sys.locale')).toBe('de-DE');
    const cleaned = await bench.driver.clean('ROOTEDMOTO');
    expect(cleaned.report).toContain('set the locale back to en-GB');
    expect(rooted.props.get('persist.sys.locale')).toBe('en-GB');
    bench.fake.unplug('ROOTEDMOTO');
  });

  /** Everything the bench.driver wrote or said: its log, the results and reports given, and every file under its data dir (baselines, artifacts). */
  function expectNowhere(secret: string, said: readonly unknown[]) {
    const files = (fs.readdirSync(bench.dataDir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
    expect(files.length).toBeGreaterThan(0);
    for (const form of [secret, secret.replaceAll(' ', '%s')]) {
      expect(bench.logs.filter((line) => line.includes(form))).toEqual([]);
      expect(
        said
          .map((each) => JSON.stringify(each))
          .filter((text) => text.includes(JSON.stringify(form).slice(1, -1)) || text.includes(form)),
      ).toEqual([]);
      expect(files.filter((file) => fs.readFileSync(file, 'latin1').includes(form))).toEqual([]);
    }
  }
  /** How a word reaches the phone's shell: adbkit single-quotes it. */
  const quoted = (word: string) => `'${word.replaceAll("'", `'"'"'`)}'`;

  it("signs a Google account in through the add-account screens, and cleaning removes it through Settings and keeps the baseline's", async () => {
    const pixel = bench.fake.device(PIXEL);
    const email = 'qa.devicecloud@gmail.com';
    const password = GOOGLE_USERS[email]!.password;
    let during: string[] = [];
    pixel.instrumentations.set('com.devicecloud.sample.test', {
      output: (device) => {
        during = device.accounts.map((account) => `${account.name} (${account.type})`);
        return recording('instrument-passing.txt');
      },
      durationMs: 200,
    });
    const from = pixel.commands.length;
    const logsFrom = bench.logs.length;
    let result;
    try {
      result = await bench.driver.execute(
        job({
          ...instrumentation('sample'),
          deviceSettings: { locale: null, wifi: false, googleAccount: { email, password } },
        }),
        recorder().context,
      );
    } finally {
      pixel.instrumentations.delete('com.devicecloud.sample.test');
    }
    expect(result.outcome, result.failReason ?? '').toBe('COMPLETED');
    expect(during).toEqual([`${LAB_ACCOUNT.name} (com.google)`, `${email} (com.google)`]);
    const sent = pixel.commands.slice(from);
    const opened = sent.indexOf(
      "'am' 'start' '-a' 'android.settings.ADD_ACCOUNT_SETTINGS' '--esa' 'account_types' 'com.google'",
    );
    // Signed in first: it needs the network that the run then turns off, and nothing is installed yet.
    expect(opened).toBeGreaterThan(-1);
    expect(opened).toBeLessThan(sent.indexOf("'svc' 'wifi' 'disable'"));
    expect(opened).toBeLessThan(sent.findIndex((command) => command.startsWith("'pm' 'install'")));
    // Typed with `input text`: spaces as %s, the rest quoted for the shell and arriving as it is.
    expect(sent).toContain(`'input' 'text' ${quoted(email)}`);
    expect(sent).toContain(`'input' 'text' ${quoted(password.replaceAll(' ', '%s'))}`);
    expect(sent.filter((command) => command === "'input' 'keyevent' 'KEYCODE_ENTER'")).toHaveLength(2);
    expect(sent.filter((command) => command.startsWith('uiautomator dump /data/local/tmp/'))).not.toHaveLength(0);
    expect(pixel.below('/data/local/tmp')).toEqual([]);
    expect(
      bench.logs
        .slice(logsFrom)
        .filter((line) => line.includes('Google sign-in'))
        .map((line) => line.replace(`${PIXEL}: the Google sign-in of ${email}: `, '')),
    ).toEqual([
      '"Sign in": typed the e-mail address, pressed Enter',
      '"Welcome": typed the password, pressed Enter',
      '"Add phone number?": tapped "Skip"',
      '"Privacy and Terms": tapped "I agree"',
      '"Google services": tapped "More"',
      '"Back up to Google Drive": tapped "Accept"',
      'signed in (dumpsys account lists it)',
    ]);

    const cleanedFrom = pixel.commands.length;
    const cleaned = await bench.driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(cleaned.report).toContain(`removed the Google account(s) ${email}, rebooted`);
    expect(pixel.accounts).toEqual([LAB_ACCOUNT]);
    expect(pixel.commands.slice(cleanedFrom)).toContain("'am' 'start' '-a' 'android.settings.SYNC_SETTINGS'");
    expect(
      bench.logs
        .slice(logsFrom)
        .filter((line) => line.includes('removing the Google account'))
        .map((line) => line.replace(`${PIXEL}: removing the Google account ${email}: `, '')),
    ).toEqual([
      '"Passwords, passkeys & accounts": opened the account',
      `"${email}": tapped "Remove account"`,
      '"Remove account?": confirmed "Remove account"',
      'removed (dumpsys account no longer lists it)',
    ]);
    expectNowhere(password, [result, cleaned]);
  });

  it("ends a run whose sign-in Google refuses as REFUSED naming the screen (a wrong password, a second factor, an unknown account); a page it does not know is the phone's failure", async () => {
    const pixel = bench.fake.device(PIXEL);
    const attempt = async (email: string, password: string) =>
      bench.driver.execute(
        job({
          ...instrumentation('sample'),
          deviceSettings: { locale: null, wifi: null, googleAccount: { email, password } },
        }),
        recorder().context,
      );
    const prefix = 'the device settings could not be applied: the Google sign-in of';

    const wrong = await attempt('qa.devicecloud@gmail.com', 'not the password');
    expect(wrong).toMatchObject({
      outcome: 'REFUSED',
      failReason: `${prefix} qa.devicecloud@gmail.com stopped at "Wrong password. Try again or click Forgot password to reset it.": the password is wrong`,
    });
    const twoStep = await attempt(
      'qa.2sv.devicecloud@gmail.com',
      GOOGLE_USERS['qa.2sv.devicecloud@gmail.com']!.password,
    );
    expect(twoStep).toMatchObject({
      outcome: 'REFUSED',
      failReason: `${prefix} qa.2sv.devicecloud@gmail.com stopped at "2-Step Verification": the account asks for a second factor (2-Step Verification); use an account without it on test devices`,
    });
    const unknown = await attempt('nobody.devicecloud@gmail.com', 'whatever it is');
    expect(unknown).toMatchObject({
      outcome: 'REFUSED',
      failReason: `${prefix} nobody.devicecloud@gmail.com stopped at "Couldn’t find your Google Account": Google knows no such account`,
    });
    const started = Date.now();
    const page = await attempt(
      'qa.recovery.devicecloud@gmail.com',
      GOOGLE_USERS['qa.recovery.devicecloud@gmail.com']!.password,
    );
    expect(page).toMatchObject({
      outcome: 'INFRA_ERROR',
      failReason:
        'preparing the phone failed: the Google sign-in of qa.recovery.devicecloud@gmail.com stopped: a page it does not know: "Protect your account"',
    });
    // The screen's own deadline (1.5 s here), not the flow's.
    expect(Date.now() - started).toBeLessThan(5000);

    expect(pixel.accounts).toEqual([LAB_ACCOUNT]);
    expect([...pixel.packages.keys()]).not.toContain('com.devicecloud.sample');
    expect(pixel.screen.name).toBe('google-protect');
    const cleaned = await bench.driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(pixel.screen.name).toBe('launcher');
    expectNowhere('not the password', [wrong]);
    for (const user of Object.values(GOOGLE_USERS))
      expectNowhere(user.password, [wrong, twoStep, unknown, page, cleaned]);
  });

  it('stops signing in at once when the run is stopped', async () => {
    const pixel = bench.fake.device(PIXEL);
    pixel.checkingMs = 60_000;
    try {
      const controller = new AbortController();
      const running = bench.driver.execute(
        job({
          ...instrumentation('sample'),
          deviceSettings: {
            locale: null,
            wifi: null,
            googleAccount: {
              email: 'qa.devicecloud@gmail.com',
              password: GOOGLE_USERS['qa.devicecloud@gmail.com']!.password,
            },
          },
        }),
        recorder(controller.signal).context,
      );
      await until(() => pixel.screen.name === 'google-checking');
      const stopped = Date.now();
      controller.abort();
      expect(await running).toMatchObject({ outcome: 'STOPPED' });
      expect(Date.now() - stopped).toBeLessThan(1000);
    } finally {
      pixel.checkingMs = 150;
    }
    expect((await bench.driver.clean(PIXEL)).ok).toBe(true);
  });

  it('fails cleaning when Settings refuses to remove an account, and cleans once it can', async () => {
    const pixel = bench.fake.device(PIXEL);
    // Signed in by the tests themselves, on a phone whose policy keeps accounts.
    pixel.accounts.push({ name: 'left.behind@gmail.com', type: 'com.google' });
    pixel.unremovableAccounts.add('left.behind@gmail.com');
    try {
      const stuck = await bench.driver.clean(PIXEL);
      expect(stuck.ok).toBe(false);
      expect(stuck.report).toContain(
        'removing the Google account left.behind@gmail.com: Settings refused ("This change isn\'t allowed by your admin")',
      );
      expect(stuck.report).toContain('Google account(s) still signed in: left.behind@gmail.com');
      expect(pixel.screen.name).toBe('launcher');
    } finally {
      pixel.unremovableAccounts.clear();
    }
    const cleaned = await bench.driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(pixel.accounts).toEqual([LAB_ACCOUNT]);
  });

  it('completes a baseline recorded before accounts were, with the accounts the phone has', async () => {
    const file = baselinePath(bench.dataDir, PIXEL);
    const { accounts: _accounts, ...older } = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, JSON.stringify(older));
    const cleaned = await bench.driver.clean(PIXEL);
    expect(cleaned.ok, cleaned.report).toBe(true);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).accounts).toEqual([LAB_ACCOUNT]);
    expect(bench.logs).toContain(`${PIXEL}: baseline completed with the phone's 1 account(s)`);
  });
});

describe('reading the screen and the accounts', () => {
  const phone = () => new FakeDevice({ serial: 'SCREEN1' });

  it("answers `uiautomator dump` on one line, in UI Automator's format, and reads it back", () => {
    const device = phone();
    startActivity(device, 'android.settings.ADD_ACCOUNT_SETTINGS');
    device.checkingMs = 0;
    const email = dumpScreen(device);
    expect(
      email.startsWith(
        `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.google.android.gms" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">`,
      ),
    ).toBe(true);
    expect(email).not.toContain('\n');
    expect(email).not.toContain('<!--');
    const field = parseUiDump(`UI hierchary dumped to: /data/local/tmp/x.xml\n${email}`)!.find(
      (node) => node.resourceId === 'identifierId',
    )!;
    expect(field).toMatchObject({
      className: 'android.widget.EditText',
      clickable: true,
      password: false,
      bounds: { left: 63, top: 584, right: 1017, bottom: 752 },
    });
    tap(device, 540, 668);
    typeText(device, 'qa.devicecloud@gmail.com');
    tap(device, 915, 2205);
    typeText(device, 'secret'); // no field has focus on a new page: typed nowhere
    tap(device, 540, 704);
    typeText(device, 'a%sb');
    const nodes = parseUiDump(dumpScreen(device))!;
    expect(screenTitle(nodes)).toBe('Welcome');
    expect(nodes.find((node) => node.password)!.text).toBe('•••');
    expect(fixedTexts(nodes)).toContain('qa.devicecloud@gmail.com');
    expect(fixedTexts(nodes).join('\n')).not.toContain('•');
    expect(device.screen.password).toBe('a b');
    expect(parseUiDump('ERROR: null root node returned by UiTestAutomationBridge.')).toBeNull();
    startActivity(device, 'android.settings.SYNC_SETTINGS');
    device.accounts.push({ name: 'a&b@example.com', type: 'com.google' });
    const list = parseUiDump(dumpScreen(device))!;
    expect(screenTitle(list)).toBe('Passwords, passkeys & accounts');
    expect(list.find((node) => node.text === 'a&b@example.com')).toMatchObject({
      resourceId: 'android:id/title',
      bounds: { top: 640, bottom: 700 },
    });
    expect(list.find((node) => node.text === 'Add account')!.bounds.top).toBe(850);
  });

  it("reads the owner's accounts from `dumpsys account`", () => {
    const device = phone();
    const output = () =>
      recording('dumpsys-account.txt', { count: device.accounts.length }).replace(
        '{accounts}\n',
        device.accounts.map((account) => `    Account {name=${account.name}, type=${account.type}}\n`).join(''),
      );
    expect(parseAccounts(output())).toEqual([]);
    device.accounts.push(
      { name: 'qa@gmail.com', type: 'com.google' },
      { name: '+15550100', type: 'com.google.android.apps.tachyon' },
    );
    expect(parseAccounts(output())).toEqual([
      { name: 'qa@gmail.com', type: 'com.google' },
      { name: '+15550100', type: 'com.google.android.apps.tachyon' },
    ]);
    const work = `User UserInfo{10:Work profile:1030}:\n  Accounts: 1\n    Account {name=work@corp.example, type=com.google}\n\n${output()}`;
    expect(parseAccounts(work)).toEqual([
      { name: 'qa@gmail.com', type: 'com.google' },
      { name: '+15550100', type: 'com.google.android.apps.tachyon' },
    ]);
    expect(parseAccounts("Can't find service: account")).toBeNull();
  });

  it('types for `input text` with spaces as %s, and refuses what it cannot type', () => {
    expect(inputTextArgument(`it's "a" $x; y`)).toBe(`it's%s"a"%s$x;%sy`);
    expect(inputTextArgument('100%sure')).toBeNull();
    expect(inputTextArgument('pässword')).toBeNull();
    expect(inputTextArgument('')).toBeNull();
  });
});
