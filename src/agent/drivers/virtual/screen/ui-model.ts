/**
 * What a virtual device shows: a screen of an app's UI model (a title and a column of texts,
 * buttons, input fields and lists), built from what the app declares (its package and activities
 * or screens) and what the run does on it. Only data: render.ts draws it, and the same screen at
 * the same clock always draws the same bytes.
 */
export type Element =
  | { readonly kind: 'text'; readonly text: string; readonly tone?: 'muted' | 'strong' }
  | { readonly kind: 'button'; readonly label: string; readonly primary?: boolean }
  | { readonly kind: 'field'; readonly label: string; readonly value: string; readonly secret?: boolean }
  | { readonly kind: 'toggle'; readonly label: string; readonly on: boolean }
  | { readonly kind: 'list'; readonly items: readonly string[] };

export interface Screen {
  readonly platform: 'ANDROID' | 'IOS';
  /** The app in front (its package or bundle id), or null on the home screen. */
  readonly appId: string | null;
  readonly title: string;
  readonly elements: readonly Element[];
  /** A line shown over the bottom of the screen (a toast, a test's verdict). */
  readonly banner: { readonly text: string; readonly tone: 'info' | 'ok' | 'fail' } | null;
}

export function homeScreen(platform: Screen['platform'], deviceName: string, apps: readonly string[]): Screen {
  return {
    platform,
    appId: null,
    title: deviceName,
    elements: [
      { kind: 'text', text: 'Apps', tone: 'muted' },
      { kind: 'list', items: apps.map(appLabel) },
    ],
    banner: null,
  };
}

/**
 * A screen of an app, named as the app declares it (`.SettingsActivity`, `CheckoutView`): what it
 * holds follows from its name, the way such screens usually look, so that different screens look
 * different and a video shows which one was on.
 */
export function appScreen(
  platform: Screen['platform'],
  appId: string,
  screenName: string,
  extra: { readonly username?: string } = {},
): Screen {
  const name = screenLabel(screenName);
  const lower = name.toLowerCase();
  const base = { platform, appId, title: name, banner: null };
  if (extra.username !== undefined || /sign|login|log in|auth/.test(lower))
    return {
      ...base,
      title: 'Sign in',
      elements: [
        { kind: 'text', text: `Welcome to ${appLabel(appId)}` },
        { kind: 'field', label: 'User name', value: extra.username ?? '' },
        { kind: 'field', label: 'Password', value: extra.username === undefined ? '' : 'password', secret: true },
        { kind: 'button', label: 'Sign in', primary: true },
      ],
    };
  if (/setting|preference|option/.test(lower))
    return {
      ...base,
      elements: [
        { kind: 'toggle', label: 'Notifications', on: true },
        { kind: 'toggle', label: 'Dark theme', on: false },
        { kind: 'toggle', label: 'Send usage data', on: false },
        { kind: 'field', label: 'Display name', value: 'Tester' },
        { kind: 'button', label: 'Save' },
      ],
    };
  if (/about|info|help|licen/.test(lower))
    return {
      ...base,
      elements: [
        { kind: 'text', text: appLabel(appId), tone: 'strong' },
        { kind: 'text', text: appId, tone: 'muted' },
        { kind: 'text', text: 'Version 1.0' },
        { kind: 'list', items: ['Terms of service', 'Privacy policy', 'Open-source licences'] },
      ],
    };
  return {
    ...base,
    elements: [
      { kind: 'field', label: 'Search', value: '' },
      { kind: 'list', items: listOf(name) },
      { kind: 'button', label: 'Continue', primary: true },
    ],
  };
}

/** The app while server-side tests drive it: the last lines they printed, as they go. */
export function testsScreen(platform: Screen['platform'], appId: string, lines: readonly string[]): Screen {
  return {
    platform,
    appId,
    title: appLabel(appId),
    elements: [
      { kind: 'text', text: 'Tests running', tone: 'strong' },
      { kind: 'list', items: lines.length === 0 ? ['Starting...'] : lines },
    ],
    banner: null,
  };
}

export function withBanner(screen: Screen, text: string, tone: 'info' | 'ok' | 'fail'): Screen {
  return { ...screen, banner: { text, tone } };
}

/** `com.devicecloud.sample` → `Sample`; `.SettingsActivity` → `Settings`. */
export function appLabel(appId: string): string {
  const last = appId.split('.').pop() || appId;
  return capitalise(last.replace(/[_-]+/g, ' '));
}

function screenLabel(screenName: string): string {
  const last = screenName.split('.').pop() || screenName;
  const words = last
    .replace(/(Activity|ViewController|Controller|Screen|View|Fragment)$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim();
  return capitalise(words || last);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Items of a list screen, different per screen but always the same for one. */
function listOf(name: string): string[] {
  const nouns = ['Item', 'Order', 'Message', 'Product', 'Photo', 'Note', 'Task', 'Event'];
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  const noun = nouns[hash % nouns.length]!;
  return Array.from({ length: 4 + (hash % 3) }, (_, index) => `${noun} ${index + 1 + ((hash >> 4) % 90)}`);
}
