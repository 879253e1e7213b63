/**
 * A Google account signed in for a run, and signed out again by cleaning, on phones without root.
 * No shell command adds or removes an account (AccountManager lets only the account's
 * authenticator and Settings do it), so both go through the screens a person would use, driven
 * with UI Automator (ui-automator.ts, ui-flow.ts):
 *
 * - sign-in: `am start -a android.settings.ADD_ACCOUNT_SETTINGS --esa account_types com.google`
 *   opens Google Play services' sign-in (Settings skips its chooser when one account type is
 *   asked for); the e-mail and password pages are filled and submitted, the terms agreed to,
 *   optional pages ("Add phone number?", backup) skipped and "Google services" accepted; then
 *   `dumpsys account` must list the account.
 * - removal: `am start -a android.settings.SYNC_SETTINGS` (the accounts list), the account, its
 *   "Remove account" button, and the dialog's "Remove account"; then `dumpsys account` must not
 *   list it any more.
 *
 * Screens are recognised by the element ids and English texts Google Play services and Settings
 * show (the phone must be in English: device-hosts.md). A screen that needs a person (a second
 * factor, a captcha), says the sign-in failed (a wrong password), or is not known stops the flow
 * with an error naming it by its title. The password is typed with `input text` and appears
 * nowhere else: not in the log, in errors, or in the description of the command that typed it.
 */
import type { DeviceIo } from './device-io.ts';
import { type DeviceAccount, amStartError, parseAccounts } from './device-output.ts';
import { UiAutomator, type UiNode, findNode, inputTextArgument } from './ui-automator.ts';
import { type Decision, type Screen, UiFlowError, type UiFlowOptions, mask, runUiFlow } from './ui-flow.ts';

/** Google said no, or wants a person: the account's matter, not the phone's (see SettingsRefused). */
export class SignInRefused extends UiFlowError {}

export const GOOGLE_ACCOUNT_TYPE = 'com.google';
const PLAY_SERVICES = 'com.google.android.gms';
/** Settings' account screens (Remove account) are the same from Android 8 on; 7 kept it in a menu. */
export const GOOGLE_ACCOUNT_MIN_API = 26;

/** Pages that need a person or say the sign-in cannot succeed, with what to do about it. */
const STOPPERS: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /^(2-Step Verification|(Verify|Confirm) (it.s|that it.s) you|Check your phone|Google sent a notification|(Enter|Get) a verification code|Use your security key)/i,
    'the account asks for a second factor (2-Step Verification); use an account without it on test devices',
  ],
  [/^Wrong password/i, 'the password is wrong'],
  [/^Couldn.t sign you in|may not be secure/i, 'Google refused the sign-in from this phone'],
  [/^Couldn.t find your Google Account/i, 'Google knows no such account'],
  [
    /^(Type the text you hear or see|Confirm you.re not a robot)|captcha/i,
    'Google asks for a captcha, which needs a person',
  ],
  [
    /^(Account disabled|Your account (has been|was) disabled|Couldn.t add account|Something went wrong)/i,
    'Google refused the account',
  ],
];
/** Play services' waits between pages. */
const LOADING = /^(Checking info|Just a sec|One moment|Please wait|Loading|Signing in)/i;
/** Offers after the password that a test phone declines, known by their heading (a whole text of the page). */
const OPTIONAL =
  /^(Add (a )?phone number\??|Add recovery (phone|email)\??|Back up (to Google (Drive|One)|device data|your (phone|device))\??)$/i;
const DECLINE = /^(Skip|Not now|No thanks|Don.t turn on|Remind me later|Later)$/i;
/** "Google services": its title, or its rows once "More" has scrolled the title away. */
const SERVICES =
  /^(Google services|Back up to Google (Drive|One)|Use location|Allow scanning|Send usage and diagnostic data)$/i;
const REMOVAL_REFUSED = /isn.t allowed|not allowed|disabled by (your )?admin|can.t be removed/i;

export async function readAccounts(io: DeviceIo, signal?: AbortSignal): Promise<DeviceAccount[]> {
  const output = await io.shell(['dumpsys', 'account'], { signal });
  const accounts = parseAccounts(output);
  if (accounts === null)
    throw new Error(
      `dumpsys account listed no accounts section (${output.trim().split('\n')[0]?.slice(0, 120) ?? 'no output'})`,
    );
  return accounts;
}

export const googleAccounts = (accounts: readonly DeviceAccount[]): string[] =>
  accounts.filter((account) => account.type === GOOGLE_ACCOUNT_TYPE).map((account) => account.name);

/** Why this account cannot be typed in, or null. Never echoes the password. */
export function untypable(account: { readonly email: string; readonly password: string }): string | null {
  if (inputTextArgument(account.email) === null)
    return `the e-mail address ${JSON.stringify(account.email)} holds characters that \`input text\` cannot type`;
  if (account.password === '') return 'the password is empty';
  if (inputTextArgument(account.password) === null)
    return 'the password holds characters that `input text` cannot type (only printable ASCII, and not "%s")';
  return null;
}

/**
 * Signs the account in unless the phone has it already (a pool's baseline account). Throws
 * UiFlowError naming the screen it stopped on; the phone is left as it is, for cleaning.
 */
export async function signInGoogleAccount(
  io: DeviceIo,
  account: { readonly email: string; readonly password: string },
  options: UiFlowOptions,
): Promise<'signed in' | 'already signed in'> {
  const { signal } = options;
  const flow = `the Google sign-in of ${account.email}`;
  if (await hasAccount(io, account.email, signal)) {
    options.log(`${flow}: the phone has it already`);
    return 'already signed in';
  }
  const ui = new UiAutomator(io, signal);
  await ui.wake();
  const started = await io.shell(
    ['am', 'start', '-a', 'android.settings.ADD_ACCOUNT_SETTINGS', '--esa', 'account_types', GOOGLE_ACCOUNT_TYPE],
    { signal },
  );
  const error = amStartError(started);
  if (error !== null) throw new UiFlowError(`${flow}: the add-account screen could not be opened (${error})`);

  const typed = { email: false, password: false };
  const secrets = [account.password];
  await runUiFlow(ui, flow, secrets, options, async (screen): Promise<Decision> => {
    const stopper = stopperOn(screen, secrets);
    if (stopper !== null) throw new SignInRefused(`${flow} stopped at "${stopper.name}": ${stopper.why}`);
    if (screen.packageName !== PLAY_SERVICES) {
      // Before the password the phone is still on its way in. After it, the flow has closed, or
      // this is a moment between two of its activities: only the account itself says which.
      if (!typed.password) return { wait: `the sign-in screens did not open (the phone shows "${screen.title}")` };
      if (await hasAccount(io, account.email, signal)) return { done: true };
      return {
        wait: `the sign-in screens closed, but dumpsys account does not list the account (the phone shows "${screen.title}")`,
      };
    }
    if (screen.texts.some((text) => LOADING.test(text)) || screen.texts.length === 0)
      return { wait: `"${screen.title}" was still loading` };

    const password = findNode(screen.nodes, { password: true });
    const email =
      password === undefined
        ? (findNode(screen.nodes, { id: /(^|:id\/)identifierId$/ }) ??
          (screen.texts.some((text) => /^Email or phone$/i.test(text))
            ? findNode(screen.nodes, { className: /EditText$/ })
            : undefined))
        : undefined;
    const field = password ?? email;
    if (field !== undefined) {
      const which = password !== undefined ? 'password' : 'email';
      // Typed once: a page that comes back is a page that refused it, and typing again would append.
      if (typed[which])
        return {
          wait: `"${screen.title}" did not move on after the ${which === 'email' ? 'e-mail address' : 'password'}`,
        };
      return {
        act: which === 'email' ? 'typed the e-mail address, pressed Enter' : 'typed the password, pressed Enter',
        run: async () => {
          typed[which] = true;
          await ui.tap(field);
          await ui.type(which === 'email' ? account.email : account.password, which === 'password');
          // Enter submits the page's form as its Next button does; a tap at the button's bounds
          // from before the typing would land on the keyboard, which now covers or moves it.
          await ui.key('KEYCODE_ENTER');
        },
      };
    }
    if (screen.texts.some((text) => OPTIONAL.test(text))) {
      const decline = findNode(screen.nodes, { text: DECLINE });
      if (decline !== undefined) return tap(ui, decline);
    }
    const agree =
      findNode(screen.nodes, { text: /^I agree$/i }) ?? findNode(screen.nodes, { id: /(^|:id\/)signinconsentNext$/ });
    if (agree !== undefined) return tap(ui, agree);
    if (screen.texts.some((text) => SERVICES.test(text))) {
      // "Accept" shows once the page has been read to its end; "More" scrolls there.
      const accept = findNode(screen.nodes, { text: /^Accept$/i }) ?? findNode(screen.nodes, { text: /^More$/i });
      if (accept !== undefined) return tap(ui, accept);
    }
    return { wait: `a page it does not know: "${screen.title}"` };
  });

  await ui.key('KEYCODE_HOME');
  options.log(`${flow}: signed in (dumpsys account lists it)`);
  return 'signed in';
}

/**
 * Removes one account through Settings → accounts → the account → Remove account → confirm.
 * Throws UiFlowError when Settings refuses (a device policy) or a screen is not the expected one.
 */
export async function removeGoogleAccount(io: DeviceIo, name: string, options: UiFlowOptions): Promise<void> {
  const { signal } = options;
  const flow = `removing the Google account ${name}`;
  const ui = new UiAutomator(io, signal);
  await ui.wake();
  const started = await io.shell(['am', 'start', '-a', 'android.settings.SYNC_SETTINGS'], { signal });
  const error = amStartError(started);
  if (error !== null) throw new UiFlowError(`${flow}: Settings' accounts could not be opened (${error})`);

  const named = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'i');
  let confirmed = false;
  try {
    await runUiFlow(ui, flow, [], options, async (screen): Promise<Decision> => {
      const refused = screen.texts.find((text) => REMOVAL_REFUSED.test(text));
      if (refused !== undefined) throw new UiFlowError(`${flow}: Settings refused ("${refused.slice(0, 120)}")`);
      const account = findNode(screen.nodes, { text: named });
      if (confirmed)
        return (await hasAccount(io, name, signal))
          ? { wait: 'the removal was confirmed, but dumpsys account still lists the account' }
          : { done: true };
      const confirm = findNode(screen.nodes, { id: /^android:id\/button1$/, text: /^Remove account$/i });
      if (confirm !== undefined) {
        return {
          act: 'confirmed "Remove account"',
          run: async () => {
            confirmed = true;
            await ui.tap(confirm);
          },
        };
      }
      const remove = findNode(screen.nodes, { text: /^Remove account$/i });
      if (account !== undefined && remove !== undefined) return tap(ui, remove);
      if (account !== undefined) return { act: 'opened the account', run: () => ui.tap(account) };
      return { wait: `the account was not on "${screen.title}"` };
    });
  } finally {
    // Settings left open (on a refusal too) would be the next run's first screen.
    await ui.key('KEYCODE_HOME').catch(() => undefined);
  }
  options.log(`${flow}: removed (dumpsys account no longer lists it)`);
}

function tap(ui: UiAutomator, node: UiNode): Decision {
  return { act: `tapped "${node.text.trim() || node.contentDesc.trim() || node.resourceId}"`, run: () => ui.tap(node) };
}

function stopperOn(screen: Screen, secrets: readonly string[]): { name: string; why: string } | null {
  for (const [pattern, why] of STOPPERS) {
    const text = screen.texts.find((each) => pattern.test(each));
    if (text !== undefined) return { name: mask(text.length > 80 ? `${text.slice(0, 77)}...` : text, secrets), why };
  }
  return null;
}

async function hasAccount(io: DeviceIo, email: string, signal: AbortSignal | undefined): Promise<boolean> {
  return googleAccounts(await readAccounts(io, signal)).includes(email);
}
