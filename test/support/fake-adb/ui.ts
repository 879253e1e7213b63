/**
 * The fake phone's screen, for the flows the driver goes through with UI Automator: Google Play
 * services' add-account pages and Settings' account removal. A state machine over the
 * recordings `recordings/ui-*.xml`, which were written from UI Automator's documented dump format
 * and from Google's sign-in screens and Settings as they appear, not captured from a phone:
 *
 * - `am start -a android.settings.ADD_ACCOUNT_SETTINGS` shows "Checking info…", then the e-mail
 *   page; `am start -a android.settings.SYNC_SETTINGS` shows Settings' list of accounts;
 * - `uiautomator dump FILE` writes the current screen to FILE, on one line as the real one does;
 * - `input tap X Y` does what the smallest node under the point does (a field takes focus, a
 *   button moves the flow on), and nothing on a label, as on a phone;
 * - `input text` appends to the focused field (`%s` is a space); `input keyevent` ENTER submits
 *   the focused sign-in field's page, HOME and BACK leave;
 * - `dumpsys account` lists the accounts, which the flows add and remove.
 *
 * Google itself is GOOGLE_USERS (plus a device's `googleUsers`): a wrong password gets the
 * "Wrong password" page, an account with a second factor the "2-Step Verification" page.
 */
import type { FakeDevice } from './device.ts';
import { recording } from './device.ts';

export interface GoogleUser {
  readonly password: string;
  readonly secondFactor?: boolean;
  /** A page (a recording's name) the account gets after its password, before the optional ones. */
  readonly interrupt?: string;
}

/** The passwords hold what a shell would act on, and a space, to prove the typing is quoted. */
export const GOOGLE_USERS: Readonly<Record<string, GoogleUser>> = {
  'qa.devicecloud@gmail.com': { password: `Tr0ub4dor & 'quoted' "$HOME" \`id\`;` },
  'qa.2sv.devicecloud@gmail.com': { password: 'second-f4ctor pass', secondFactor: true },
  'qa.recovery.devicecloud@gmail.com': { password: 'r3covery pass', interrupt: 'google-protect' },
};

const GOOGLE = 'com.google.android.gms';

interface Node {
  readonly text: string;
  readonly id: string;
  readonly className: string;
  readonly password: boolean;
  readonly bounds: readonly [number, number, number, number];
}

export function startActivity(device: FakeDevice, action: string): { output: string; status: number } {
  if (action === 'android.settings.ADD_ACCOUNT_SETTINGS') {
    show(device, 'google-checking', { email: '', password: '', focused: null, account: null });
    return { output: `Starting: Intent { act=${action} (has extras) }`, status: 0 };
  }
  if (action === 'android.settings.SYNC_SETTINGS') {
    show(device, 'settings-accounts', { account: null });
    return { output: `Starting: Intent { act=${action} }`, status: 0 };
  }
  // Opening a URL: the browser takes it (the caller's `-d` is what tests look at, in the commands).
  if (action === 'android.intent.action.VIEW')
    return { output: `Starting: Intent { act=${action} dat=... }`, status: 0 };
  return {
    output: `Starting: Intent { act=${action} }\nError: Activity not started, unable to resolve Intent { act=${action} flg=0x10000000 }`,
    status: 1,
  };
}

/** What `uiautomator dump` writes: the screen's recording, without its comment and indentation. */
export function dumpScreen(device: FakeDevice): string {
  const screen = device.screen;
  if (screen.name === 'google-checking' && Date.now() - screen.since >= device.checkingMs)
    show(device, 'google-email', {});
  const { email, password, focused, account } = device.screen;
  const xml = recording(`ui-${device.screen.name}.xml`, {
    email: escape(email),
    emailFocused: String(focused === 'email'),
    // What a password field reports: its dots, never its text.
    passwordMask: '•'.repeat(password.length),
    passwordFocused: String(focused === 'password'),
    name: escape(account ?? ''),
    ...(device.screen.name === 'settings-accounts' ? accountList(device) : {}),
  });
  return xml
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/>\s+</g, '><')
    .trim();
}

export function tap(device: FakeDevice, x: number, y: number): void {
  const under = nodesOf(dumpScreen(device))
    .filter(({ bounds: [left, top, right, bottom] }) => x >= left && x < right && y >= top && y < bottom)
    .sort((a, b) => area(a) - area(b));
  for (const node of under) {
    const action = actionOf(device, node);
    if (action !== null) return action();
  }
}

export function typeText(device: FakeDevice, text: string): void {
  const typed = text.replaceAll('%s', ' ');
  if (device.screen.focused === 'email') device.screen.email += typed;
  if (device.screen.focused === 'password') device.screen.password += typed;
}

export function keyEvent(device: FakeDevice, key: string): void {
  // Enter in a sign-in field submits its page's form, as the page's Next button does.
  if ((key === 'KEYCODE_ENTER' || key === '66') && device.screen.focused === 'email') submitEmail(device);
  if ((key === 'KEYCODE_ENTER' || key === '66') && device.screen.focused === 'password') submitPassword(device);
  if (key === 'KEYCODE_HOME' || key === '3') show(device, 'launcher', { account: null });
  if (key === 'KEYCODE_BACK' || key === '4') {
    const back: Record<string, string> = {
      'settings-remove': 'settings-account',
      'settings-remove-refused': 'settings-account',
      'settings-account': 'settings-accounts',
    };
    show(device, back[device.screen.name] ?? 'launcher', {});
  }
}

export function dumpsysAccount(device: FakeDevice): string {
  const lines = device.accounts.map((account) => `    Account {name=${account.name}, type=${account.type}}\n`).join('');
  return recording('dumpsys-account.txt', { count: device.accounts.length }).replace('{accounts}\n', lines);
}

function show(device: FakeDevice, name: string, changes: Partial<FakeDevice['screen']>): void {
  device.screen = { ...device.screen, focused: null, ...changes, name, since: Date.now() };
  device.foreground = name.startsWith('google-')
    ? `${GOOGLE}/.auth.uiflows.addaccount.AccountIntroActivity`
    : name.startsWith('settings-')
      ? 'com.android.settings/.Settings$AccountDashboardActivity'
      : 'launcher';
}

function actionOf(device: FakeDevice, node: Node): (() => void) | null {
  const { screen } = device;
  const is = (text: string) => node.text === text || node.id === text;
  switch (screen.name) {
    case 'google-email':
    case 'google-email-unknown':
      if (is('identifierId')) return () => (screen.focused = 'email');
      if (is('Next') || is('identifierNext')) return () => submitEmail(device);
      return null;
    case 'google-password':
    case 'google-password-wrong':
      if (is('password') || node.password) return () => (screen.focused = 'password');
      if (is('Next') || is('passwordNext')) return () => submitPassword(device);
      return null;
    case 'google-phone':
      return is('Skip') ? () => show(device, 'google-terms', {}) : null;
    case 'google-terms':
      if (!is('I agree') && !is('signinconsentNext')) return null;
      return () => {
        device.accounts.push({ name: screen.email, type: 'com.google' });
        show(device, 'google-services', {});
      };
    case 'google-services':
      return is('More') ? () => show(device, 'google-services-end', {}) : null;
    case 'google-services-end':
      return is('Accept') ? () => show(device, 'launcher', {}) : null;
    case 'settings-accounts': {
      const account = device.accounts.find((each) => each.name === node.text && node.id === 'android:id/title');
      return account === undefined ? null : () => show(device, 'settings-account', { account: account.name });
    }
    case 'settings-account':
      return is('Remove account') ? () => show(device, 'settings-remove', {}) : null;
    case 'settings-remove':
      if (is('Cancel')) return () => show(device, 'settings-account', {});
      if (node.id !== 'android:id/button1') return null;
      return () => {
        if (device.unremovableAccounts.has(screen.account ?? '')) return show(device, 'settings-remove-refused', {});
        device.accounts.splice(
          device.accounts.findIndex((each) => each.name === screen.account),
          1,
        );
        show(device, 'settings-accounts', { account: null });
      };
    case 'settings-remove-refused':
      return is('OK') ? () => show(device, 'settings-account', {}) : null;
    default:
      return null;
  }
}

function submitEmail(device: FakeDevice): void {
  show(device, userOf(device, device.screen.email) === undefined ? 'google-email-unknown' : 'google-password', {});
}

function submitPassword(device: FakeDevice): void {
  const user = userOf(device, device.screen.email)!;
  // Google forgets a wrong password; the page comes back with an empty field.
  if (device.screen.password !== user.password) return show(device, 'google-password-wrong', { password: '' });
  show(device, user.secondFactor ? 'google-2sv' : (user.interrupt ?? 'google-phone'), {});
}

function userOf(device: FakeDevice, email: string): GoogleUser | undefined {
  return device.googleUsers.get(email) ?? GOOGLE_USERS[email];
}

/** Settings lists every account, one row each, above "Add account" and the sync switch. */
function accountList(device: FakeDevice): Record<string, string | number> {
  const top = 600;
  const rows = device.accounts.map((account, index) =>
    recording('ui-settings-account-row.xml', {
      index,
      name: escape(account.name),
      label: account.type === 'com.google' ? 'Google' : escape(account.type),
    }).replace(/\{y(\d+)\}/g, (_, offset: string) => String(top + index * 200 + Number(offset))),
  );
  const add = top + rows.length * 200;
  const sync = add + 168;
  return {
    rows: rows.join(''),
    addIndex: rows.length,
    addTop: add,
    addBottom: add + 168,
    addTextTop: add + 50,
    addTextBottom: add + 118,
    syncIndex: rows.length + 1,
    syncTop: sync,
    syncBottom: sync + 200,
    syncTextTop: sync + 60,
    syncTextBottom: sync + 140,
  };
}

function nodesOf(xml: string): Node[] {
  return [...xml.matchAll(/<node ([^>]*?)\/?>/g)].map((match) => {
    const attributes = Object.fromEntries(
      [...match[1]!.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, key, value]) => [key!, unescape(value!)]),
    );
    const bounds = /^\[(\d+),(\d+)\]\[(\d+),(\d+)\]$/.exec(attributes.bounds ?? '') ?? ['', '0', '0', '0', '0'];
    return {
      text: attributes.text ?? '',
      id: attributes['resource-id'] ?? '',
      className: attributes.class ?? '',
      password: attributes.password === 'true',
      bounds: [Number(bounds[1]), Number(bounds[2]), Number(bounds[3]), Number(bounds[4])] as const,
    };
  });
}

const area = ({ bounds: [left, top, right, bottom] }: Node) => (right - left) * (bottom - top);
const escape = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
const unescape = (text: string) =>
  text.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
