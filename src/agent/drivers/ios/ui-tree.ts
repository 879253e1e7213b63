/**
 * The accessibility tree of the app on screen, as WebDriverAgent gives it (`GET /source?format=json`:
 * nodes with type, name, label, value, rect, isEnabled/isVisible as "1"/"0", children), and what
 * the crawler reads from it: which screen this is, what can be tapped, where the way back is, and
 * where a sign-in form takes its name and password. Pure: test/unit/ios-ui-tree.test.ts.
 */
export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface UiNode {
  /** Without the XCUIElementType prefix: Button, Cell, StaticText, NavigationBar, ... */
  readonly type: string;
  readonly name: string | null;
  readonly label: string | null;
  readonly value: string | null;
  readonly rect: Rect;
  readonly enabled: boolean;
  readonly visible: boolean;
  readonly children: readonly UiNode[];
}

export function parseUiTree(json: unknown): UiNode {
  const node = (json ?? {}) as Record<string, unknown>;
  const rect = (node.rect ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  const flag = (value: unknown) => value === true || value === '1' || value === 1 || value === 'true';
  return {
    type: String(node.type ?? 'Other').replace(/^XCUIElementType/, ''),
    name: text(node.name),
    label: text(node.label),
    value: text(node.value),
    rect: {
      x: Number(rect.x ?? 0),
      y: Number(rect.y ?? 0),
      width: Number(rect.width ?? 0),
      height: Number(rect.height ?? 0),
    },
    // WDA omits the flags on some nodes; absent means usable.
    enabled: node.isEnabled === undefined ? true : flag(node.isEnabled),
    visible: node.isVisible === undefined ? true : flag(node.isVisible),
    children: Array.isArray(node.children) ? node.children.map(parseUiTree) : [],
  };
}

function* walk(node: UiNode, inKeyboard = false): Generator<{ node: UiNode; inKeyboard: boolean; parents: UiNode[] }> {
  const stack: Array<{ node: UiNode; inKeyboard: boolean; parents: UiNode[] }> = [{ node, inKeyboard, parents: [] }];
  while (stack.length > 0) {
    const item = stack.shift()!;
    yield item;
    const keyboard = item.inKeyboard || item.node.type === 'Keyboard';
    stack.unshift(
      ...item.node.children.map((child) => ({
        node: child,
        inKeyboard: keyboard,
        parents: [...item.parents, item.node],
      })),
    );
  }
}

const TAPPABLE = new Set(['Button', 'Cell', 'Link', 'Tab', 'MenuItem', 'Switch', 'SegmentedControl', 'Image']);
const STRUCTURE = new Set([
  'NavigationBar',
  'TabBar',
  'Button',
  'Cell',
  'TextField',
  'SecureTextField',
  'StaticText',
  'Switch',
  'Link',
  'Table',
  'CollectionView',
  'Alert',
]);

function labelOf(node: UiNode): string {
  return node.label ?? node.name ?? node.value ?? '';
}

/** Identifies a screen by its structure and fixed texts, not by field values or scroll positions. */
export function screenSignature(root: UiNode): string {
  const parts: string[] = [];
  for (const { node, inKeyboard } of walk(root)) {
    if (inKeyboard || !node.visible || !STRUCTURE.has(node.type)) continue;
    parts.push(
      `${node.type}:${node.type === 'StaticText' ? (node.label ?? node.name ?? '') : (node.name ?? node.label ?? '')}`,
    );
  }
  return parts.join('|');
}

/** The navigation bar's title, else the first text on the screen. */
export function screenTitle(root: UiNode): string {
  for (const { node } of walk(root)) {
    if (node.type === 'NavigationBar' && (node.name ?? node.label)) return (node.name ?? node.label)!;
  }
  for (const { node, inKeyboard } of walk(root)) {
    if (!inKeyboard && node.visible && node.type === 'StaticText' && labelOf(node) !== '') return labelOf(node);
  }
  return 'untitled screen';
}

/** The back button: the leftmost button of the navigation bar. */
export function backButton(root: UiNode): UiNode | null {
  for (const { node } of walk(root)) {
    if (node.type !== 'NavigationBar') continue;
    const buttons = [...walk(node)]
      .map((item) => item.node)
      .filter((child) => child.type === 'Button' && child.enabled && child.visible && hasArea(child));
    buttons.sort((a, b) => a.rect.x - b.rect.x);
    if (buttons.length > 0 && buttons[0]!.rect.x < node.rect.x + node.rect.width / 3) return buttons[0]!;
  }
  return null;
}

/** What the crawler may tap, top to bottom, the way back last; never the keyboard's keys. */
export function tappables(root: UiNode): UiNode[] {
  const back = backButton(root);
  const found: UiNode[] = [];
  for (const { node, inKeyboard, parents } of walk(root)) {
    if (inKeyboard || !TAPPABLE.has(node.type) || !node.enabled || !node.visible || !hasArea(node)) continue;
    if (node.type === 'Image' && !parents.some((parent) => parent.type === 'Cell') && labelOf(node) === '') continue;
    if (node === back) continue;
    found.push(node);
  }
  found.sort((a, b) => a.rect.y - b.rect.y || a.rect.x - b.rect.x);
  return back === null ? found : [...found, back];
}

/** A stable name for an element of a screen, to remember what was tapped. */
export function elementKey(node: UiNode): string {
  return `${node.type}:${labelOf(node)}@${Math.round(node.rect.x)},${Math.round(node.rect.y)}`;
}

export function describeElement(node: UiNode): string {
  const label = labelOf(node);
  return label === '' ? `a ${node.type.toLowerCase()}` : `"${label}"`;
}

export function centerOf(node: UiNode): { x: number; y: number } {
  return { x: Math.round(node.rect.x + node.rect.width / 2), y: Math.round(node.rect.y + node.rect.height / 2) };
}

/** A sign-in form: a text field for the name and a secure one for the password, and its button. */
export function signInForm(root: UiNode): { user: UiNode; password: UiNode; submit: UiNode | null } | null {
  const nodes = [...walk(root)].filter((item) => !item.inKeyboard && item.node.visible).map((item) => item.node);
  const password = nodes.find((node) => node.type === 'SecureTextField');
  const user = nodes.find((node) => node.type === 'TextField');
  if (password === undefined || user === undefined) return null;
  const buttons = nodes.filter((node) => node.type === 'Button' && node.enabled && hasArea(node));
  const submit =
    buttons.find((node) => /sign\s*in|log\s*in|login|continue|submit/i.test(labelOf(node))) ??
    buttons.find((node) => node.rect.y > password.rect.y) ??
    null;
  return { user, password, submit };
}

function hasArea(node: UiNode): boolean {
  return node.rect.width > 0 && node.rect.height > 0;
}
