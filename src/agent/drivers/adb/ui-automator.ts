/**
 * Reading and touching a phone's screen from the shell, for what no command can do without root
 * (signing a Google account in and out): `uiautomator dump` of the active window's hierarchy,
 * read back as nodes, and `input` taps, text and keys. Every command obeys the caller's signal
 * and a deadline of its own.
 */
import { XMLParser } from 'fast-xml-parser';
import type { DeviceIo } from './device-io.ts';

export interface Bounds {
  readonly left: number;
  readonly top: number;
  readonly right: number;
  readonly bottom: number;
}

/** One node of a dump, with the attributes the flows look at. */
export interface UiNode {
  readonly text: string;
  readonly resourceId: string;
  readonly className: string;
  readonly packageName: string;
  readonly contentDesc: string;
  readonly clickable: boolean;
  readonly enabled: boolean;
  readonly password: boolean;
  readonly bounds: Bounds;
}

export interface UiTimings {
  /** Between dumps while a screen loads or has not yet changed after a tap. */
  readonly pollMs: number;
  /** How long a screen may take to appear, or to move on after a tap, before the flow gives up on it. */
  readonly screenTimeoutMs: number;
  /** One whole flow (a sign-in, the removal of one account). */
  readonly flowTimeoutMs: number;
}

/** A dump takes a second or two on a phone, so polling faster than this only queues dumps. */
export const DEFAULT_UI_TIMINGS: UiTimings = { pollMs: 250, screenTimeoutMs: 30_000, flowTimeoutMs: 180_000 };

/** The dump goes to a file (`shell:` has no terminal for `/dev/tty`) that is read and deleted at once. */
const DUMP_FILE = '/data/local/tmp/devicecloud-window.xml';
/** `uiautomator dump` waits for the window to be idle, up to about 10 s, before it gives up. */
const DUMP_TIMEOUT_MS = 20_000;
const INPUT_TIMEOUT_MS = 10_000;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  preserveOrder: true,
  htmlEntities: true,
  trimValues: false,
});

type Ordered = Array<Record<string, unknown> & { ':@'?: Record<string, string> }>;

/**
 * The nodes of a dump in document order (parents before children), or null when the output holds
 * no hierarchy: `ERROR: null root node returned by UiTestAutomationBridge.` and `ERROR: could not
 * get idle state.` are what a window that is still changing gives.
 */
export function parseUiDump(output: string): UiNode[] | null {
  const start = output.indexOf('<?xml');
  const end = output.lastIndexOf('</hierarchy>');
  if (start < 0 || end < start) return null;
  const nodes: UiNode[] = [];
  const walk = (children: Ordered) => {
    for (const child of children) {
      if (!('node' in child)) continue;
      const attributes = child[':@'] ?? {};
      nodes.push(toNode(attributes));
      walk(child.node as Ordered);
    }
  };
  const document = parser.parse(output.slice(start, end + '</hierarchy>'.length)) as Ordered;
  const hierarchy = document.find((entry) => 'hierarchy' in entry);
  if (hierarchy === undefined) return null;
  walk(hierarchy.hierarchy as Ordered);
  return nodes;
}

function toNode(attributes: Record<string, string>): UiNode {
  const bounds = /^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$/.exec(attributes.bounds ?? '');
  return {
    text: attributes.text ?? '',
    resourceId: attributes['resource-id'] ?? '',
    className: attributes.class ?? '',
    packageName: attributes.package ?? '',
    contentDesc: attributes['content-desc'] ?? '',
    clickable: attributes.clickable === 'true',
    enabled: attributes.enabled !== 'false',
    password: attributes.password === 'true',
    bounds:
      bounds === null
        ? { left: 0, top: 0, right: 0, bottom: 0 }
        : { left: Number(bounds[1]), top: Number(bounds[2]), right: Number(bounds[3]), bottom: Number(bounds[4]) },
  };
}

export function isEditable(node: UiNode): boolean {
  return node.password || node.className.endsWith('EditText');
}

/** Texts a screen shows of itself (labels, headings, buttons), never what was typed into a field. */
export function fixedTexts(nodes: readonly UiNode[]): string[] {
  return nodes
    .filter((node) => !isEditable(node))
    .flatMap((node) => [node.text, node.contentDesc])
    .map((text) => text.trim())
    .filter((text) => text !== '');
}

/** What tells one screen from another: its structure and fixed texts, not the values in its fields. */
export function screenSignature(nodes: readonly UiNode[]): string {
  return nodes
    .map((node) => `${node.className}#${node.resourceId}${isEditable(node) ? '' : `=${node.text}|${node.contentDesc}`}`)
    .join('\n');
}

/**
 * The screen's name for a person: its first label or heading (a web page's title, which WebView
 * reports as its own text, says only "Sign in – Google Accounts" on every page of the flow).
 */
export function screenTitle(nodes: readonly UiNode[]): string {
  const label = nodes.find(
    (node) => node.text.trim() !== '' && !isEditable(node) && !node.clickable && !node.className.endsWith('WebView'),
  );
  const any =
    label ?? nodes.find((node) => !isEditable(node) && (node.text.trim() !== '' || node.contentDesc.trim() !== ''));
  const title = (any?.text.trim() || any?.contentDesc.trim()) ?? '';
  return title === '' ? '(a screen without text)' : title.length > 80 ? `${title.slice(0, 77)}...` : title;
}

export interface NodeQuery {
  /** Whole text or content description, matched case-insensitively by the caller's pattern. */
  readonly text?: RegExp;
  /** `com.android.settings:id/button`, or a web page's element id (`identifierNext`) as WebView reports it. */
  readonly id?: RegExp;
  readonly className?: RegExp;
  readonly password?: boolean;
}

export function findNode(nodes: readonly UiNode[], query: NodeQuery): UiNode | undefined {
  return nodes.find(
    (node) =>
      (query.text === undefined || query.text.test(node.text.trim()) || query.text.test(node.contentDesc.trim())) &&
      (query.id === undefined || query.id.test(node.resourceId)) &&
      (query.className === undefined || query.className.test(node.className)) &&
      (query.password === undefined || node.password === query.password) &&
      node.bounds.right > node.bounds.left &&
      node.bounds.bottom > node.bounds.top,
  );
}

/**
 * `input text` types through the virtual keyboard's key map: printable ASCII only, with `%s`
 * standing for a space (a real space splits or is refused by some versions), so a literal `%s`
 * cannot be typed at all. Null for text it cannot type. Quoting for the device's shell is
 * DeviceIo's (each word single-quoted), so `'`, `"`, `$`, `` ` `` and `;` arrive as they are.
 */
export function inputTextArgument(text: string): string | null {
  if (text === '' || !/^[\x20-\x7e]+$/.test(text) || text.includes('%s')) return null;
  return text.replaceAll(' ', '%s');
}

export class UiAutomator {
  constructor(
    private readonly io: DeviceIo,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** The active window's nodes, or why there are none this time. */
  async dump(): Promise<{ nodes: UiNode[] } | { nodes: null; problem: string }> {
    const output = await this.io.shell(`uiautomator dump ${DUMP_FILE} && cat ${DUMP_FILE}; rm -f ${DUMP_FILE}`, {
      signal: this.signal,
      timeoutMs: DUMP_TIMEOUT_MS,
    });
    const nodes = parseUiDump(output);
    if (nodes !== null && nodes.length > 0) return { nodes };
    return {
      nodes: null,
      problem:
        output
          .split('\n')
          .find((line) => line.trim() !== '')
          ?.trim()
          .slice(0, 160) ?? 'uiautomator dump printed nothing',
    };
  }

  async tap(node: UiNode): Promise<void> {
    const { left, top, right, bottom } = node.bounds;
    await this.input(['tap', String(Math.floor((left + right) / 2)), String(Math.floor((top + bottom) / 2))]);
  }

  /** Types into the focused field; a secret's words never reach an error message. */
  async type(text: string, secret: boolean): Promise<void> {
    const argument = inputTextArgument(text);
    if (argument === null) throw new Error('input text cannot type this text');
    await this.input(['text', argument], secret ? 'input text (hidden)' : undefined);
  }

  async key(code: string): Promise<void> {
    await this.input(['keyevent', code]);
  }

  /** The screen on and the keyguard away (a phone without a screen lock, as device-hosts.md asks). */
  async wake(): Promise<void> {
    await this.key('KEYCODE_WAKEUP');
    // Some vendors' `wm` lacks it; a keyguard that stays shows up as a screen the flow does not know.
    await this.io
      .shell(['wm', 'dismiss-keyguard'], { signal: this.signal, timeoutMs: INPUT_TIMEOUT_MS })
      .catch((error: unknown) => {
        if (this.signal?.aborted) throw error;
      });
  }

  private async input(args: readonly string[], describeAs?: string): Promise<void> {
    const output = (
      await this.io.shell(['input', ...args], { signal: this.signal, timeoutMs: INPUT_TIMEOUT_MS, describeAs })
    ).trim();
    // `input` prints nothing when it worked (vendors' linker warnings aside); its complaints are withheld for a secret.
    const complaint = /^(Error|Exception|java\.\w|usage:).*$/im.exec(output)?.[0];
    if (complaint !== undefined)
      throw new Error(
        `${describeAs ?? `input ${args[0]}`} failed${describeAs === undefined ? `: ${complaint.slice(0, 160)}` : ''}`,
      );
  }
}
