/**
 * Draws a screen of the UI model (ui-model.ts) the way a phone shows it: a status bar with the time
 * and the battery, a title bar in the app's colour, then its elements, and the system's navigation
 * at the bottom. Android and iOS differ where they visibly do (status bar, title alignment,
 * navigation). A screen wider than tall (the device turned to landscape) lays its elements out in
 * two columns side by side, as apps reflow their forms, and hitTest finds them where they were
 * drawn. Pure: the screen, the size and the clock decide every byte.
 */
import { GLYPH_HEIGHT, Raster, advance, fit, textWidth } from './raster.ts';
import type { Element, Screen } from './ui-model.ts';

export interface ScreenSize {
  readonly width: number;
  readonly height: number;
}

/** Upright. Even sides: H.264 in yuv420p, what browsers play, takes nothing else. */
export const SCREEN_SIZES: Readonly<Record<Screen['platform'], ScreenSize>> = {
  ANDROID: { width: 320, height: 640 },
  IOS: { width: 300, height: 640 },
};

/** The size of a screen turned to `orientation`: in landscape its sides swap. */
export function turned(size: ScreenSize, orientation: 'portrait' | 'landscape'): ScreenSize {
  const long = Math.max(size.width, size.height);
  const short = Math.min(size.width, size.height);
  return orientation === 'landscape' ? { width: long, height: short } : { width: short, height: long };
}

const INK = 0x202124;
const MUTED = 0x6b6f76;
const LINE = 0xdadce0;
const PAGE = 0xffffff;
const PALETTE = [0x1a73e8, 0x188038, 0xd93025, 0x9334e6, 0xe37400, 0x007b83, 0xc5221f, 0x3949ab];
const S = 2;
const LINE_HEIGHT = GLYPH_HEIGHT * S;
const PAD = 14;

export interface Clock {
  /** `HH:MM` as the status bar shows it. */
  readonly time: string;
  /** 0..100. */
  readonly battery: number;
}

/**
 * Where an element of the screen was drawn (rows of a list: LIST_ROW_HEIGHT each from `top`, the
 * first of them `firstRow`: a list that runs on into the next column has a box in each).
 */
export interface ElementBox {
  readonly index: number;
  readonly top: number;
  readonly bottom: number;
  readonly left: number;
  readonly right: number;
  readonly firstRow: number;
}
export const LIST_ROW_HEIGHT = 36;
const BUTTON_HEIGHT = 38;
const FIELD_BOX_HEIGHT = 34;
const TOGGLE_HEIGHT = 30;
const TEXT_LINE_GAP = 6;
const ELEMENT_GAP = 10;

/** What is at a point of the drawn screen: an element (a list's row), the system navigation, or nothing. */
export type Hit =
  | { readonly kind: 'element'; readonly index: number; readonly row: number | null }
  | { readonly kind: 'navigation'; readonly key: 'back' | 'home' | 'recents' }
  | null;

export function hitTest(screen: Screen, size: ScreenSize, x: number, y: number): Hit {
  const boxes: ElementBox[] = [];
  renderScreen(screen, size, { time: '00:00', battery: 0 }, boxes);
  const navHeight = screen.platform === 'IOS' ? 20 : 36;
  if (y >= size.height - navHeight) {
    if (screen.platform === 'IOS') return { kind: 'navigation', key: 'home' };
    const third = Math.min(2, Math.floor((x * 3) / size.width));
    return { kind: 'navigation', key: (['back', 'home', 'recents'] as const)[third]! };
  }
  const box = boxes.find(
    (candidate) => y >= candidate.top && y < candidate.bottom && x >= candidate.left && x < candidate.right,
  );
  if (box === undefined) return null;
  const element = screen.elements[box.index]!;
  return {
    kind: 'element',
    index: box.index,
    row: element.kind === 'list' ? box.firstRow + Math.floor((y - box.top) / LIST_ROW_HEIGHT) : null,
  };
}

export function renderScreen(screen: Screen, size: ScreenSize, clock: Clock, boxes?: ElementBox[]): Raster {
  const raster = new Raster(size.width, size.height, PAGE);
  const accent = accentOf(screen.appId);
  const ios = screen.platform === 'IOS';
  const statusHeight = 26;
  const titleHeight = 48;
  const navHeight = ios ? 20 : 36;

  // Status bar.
  const statusBg = ios ? PAGE : darker(accent);
  const statusInk = ios ? INK : PAGE;
  raster.fill(0, 0, size.width, statusHeight, statusBg);
  const timeX = ios ? 22 : 10;
  raster.text(timeX, (statusHeight - LINE_HEIGHT) / 2, clock.time, statusInk, S);
  battery(raster, size.width - 10, statusHeight, clock.battery, statusInk);

  // Title bar.
  const titleY = statusHeight;
  if (ios) {
    raster.fill(0, titleY, size.width, titleHeight, 0xf6f6f8);
    raster.fill(0, titleY + titleHeight - 1, size.width, 1, LINE);
    const title = fit(screen.title, columns(size.width - 2 * PAD));
    raster.text((size.width - textWidth(title, S)) / 2, titleY + (titleHeight - LINE_HEIGHT) / 2, title, INK, S);
  } else {
    raster.fill(0, titleY, size.width, titleHeight, accent);
    const title = fit(screen.title, columns(size.width - 2 * PAD));
    raster.text(PAD, titleY + (titleHeight - LINE_HEIGHT) / 2, title, PAGE, S);
  }

  // Body: a column of the elements; turned to landscape, where the screen is half as tall, an
  // element that no longer fits starts a second column beside the first, and a list's rows run
  // on into it (what fits in neither is cut, as below the fold of an upright screen).
  const bottom = size.height - navHeight - 8;
  const bodyTop = titleY + titleHeight + 12;
  const columnCount = size.width > size.height ? 2 : 1;
  const inner = Math.floor((size.width - PAD * (columnCount + 1)) / columnCount);
  let column = 0;
  let y = bodyTop;
  const nextColumn = () => {
    if (column + 1 >= columnCount) return false;
    column += 1;
    y = bodyTop;
    return true;
  };
  const place = (index: number, element: Element, firstRow = 0) => {
    const left = PAD + column * (inner + PAD);
    const top = y;
    y = drawElement(raster, element, left, y, bottom, inner, accent);
    boxes?.push({ index, top, bottom: y, left, right: left + inner, firstRow });
  };
  for (const [index, element] of screen.elements.entries()) {
    if (element.kind === 'list') {
      for (let first = 0; first < element.items.length;) {
        if (y + LIST_ROW_HEIGHT > bottom && !nextColumn()) break;
        const rows = Math.min(element.items.length - first, Math.floor((bottom - y) / LIST_ROW_HEIGHT));
        place(index, { kind: 'list', items: element.items.slice(first, first + rows) }, first);
        first += rows;
      }
    } else {
      if (y > bodyTop && y + elementHeight(element, inner) > bottom) nextColumn();
      if (y >= bottom) break;
      place(index, element);
    }
    y += ELEMENT_GAP;
  }

  if (screen.banner !== null) {
    const tone = { info: INK, ok: 0x188038, fail: 0xd93025 }[screen.banner.tone];
    const text = fit(screen.banner.text, columns(size.width - 4 * PAD));
    const h = 34;
    const top = size.height - navHeight - h - 12;
    raster.rounded(PAD, top, size.width - 2 * PAD, h, 8, tone);
    raster.text(2 * PAD, top + (h - LINE_HEIGHT) / 2, text, PAGE, S);
  }

  // System navigation.
  const navY = size.height - navHeight;
  if (ios) {
    raster.rounded((size.width - 120) / 2, navY + 8, 120, 5, 2, INK);
  } else {
    raster.fill(0, navY, size.width, navHeight, 0xf1f3f4);
    const mid = navY + navHeight / 2;
    const third = size.width / 3;
    for (let row = 0; row < 12; row++) raster.fill(third / 2 - 6 + Math.abs(row - 6), mid - 6 + row, 2, 1, MUTED); // back: <
    raster.rounded(size.width / 2 - 7, mid - 7, 14, 14, 7, MUTED);
    raster.rounded(size.width / 2 - 5, mid - 5, 10, 10, 5, 0xf1f3f4);
    raster.outline(2 * third + third / 2 - 6, mid - 6, 12, 12, MUTED, 2);
  }
  return raster;
}

/** Draws the element `inner` wide from (left, y), cut at `bottom`; answers where it ends. */
function drawElement(
  raster: Raster,
  element: Element,
  left: number,
  y: number,
  bottom: number,
  inner: number,
  accent: number,
): number {
  switch (element.kind) {
    case 'text': {
      const colour = element.tone === 'muted' ? MUTED : INK;
      let top = y;
      for (const line of wrap(element.text, columns(inner))) {
        if (top + LINE_HEIGHT > bottom) break;
        raster.text(left, top, line, colour, S);
        if (element.tone === 'strong') raster.text(left + 1, top, line, colour, S);
        top += LINE_HEIGHT + TEXT_LINE_GAP;
      }
      return top - TEXT_LINE_GAP;
    }
    case 'button': {
      const h = BUTTON_HEIGHT;
      if (element.primary === true) raster.rounded(left, y, inner, h, 8, accent);
      else {
        raster.rounded(left, y, inner, h, 8, accent);
        raster.rounded(left + 2, y + 2, inner - 4, h - 4, 6, PAGE);
      }
      const label = fit(element.label, columns(inner - 16));
      raster.text(
        left + (inner - textWidth(label, S)) / 2,
        y + (h - LINE_HEIGHT) / 2,
        label,
        element.primary ? PAGE : accent,
        S,
      );
      return y + h;
    }
    case 'field': {
      raster.text(left, y, fit(element.label, columns(inner)), MUTED, S);
      const top = y + LINE_HEIGHT + TEXT_LINE_GAP;
      const h = FIELD_BOX_HEIGHT;
      raster.outline(left, top, inner, h, element.value === '' ? LINE : accent, 2);
      const shown = element.secret === true ? '*'.repeat(Math.min(element.value.length, 12)) : element.value;
      if (shown !== '') raster.text(left + 8, top + (h - LINE_HEIGHT) / 2, fit(shown, columns(inner - 16)), INK, S);
      return top + h;
    }
    case 'toggle': {
      const h = TOGGLE_HEIGHT;
      raster.text(left, y + (h - LINE_HEIGHT) / 2, fit(element.label, columns(inner - 56)), INK, S);
      const x = left + inner - 44;
      raster.rounded(x, y + 5, 44, 20, 10, element.on ? accent : LINE);
      raster.rounded(element.on ? x + 26 : x + 2, y + 7, 16, 16, 8, PAGE);
      return y + h;
    }
    case 'list': {
      const row = LIST_ROW_HEIGHT;
      let top = y;
      for (const item of element.items) {
        if (top + row > bottom) break;
        raster.text(left, top + (row - LINE_HEIGHT) / 2, fit(item, columns(inner - 20)), INK, S);
        raster.text(left + inner - advance(S) + S, top + (row - LINE_HEIGHT) / 2, '>', MUTED, S);
        raster.fill(left, top + row - 1, inner, 1, LINE);
        top += row;
      }
      return top;
    }
  }
}

/** How tall drawElement draws the element when nothing cuts it. */
function elementHeight(element: Element, inner: number): number {
  switch (element.kind) {
    case 'text':
      return wrap(element.text, columns(inner)).length * (LINE_HEIGHT + TEXT_LINE_GAP) - TEXT_LINE_GAP;
    case 'button':
      return BUTTON_HEIGHT;
    case 'field':
      return LINE_HEIGHT + TEXT_LINE_GAP + FIELD_BOX_HEIGHT;
    case 'toggle':
      return TOGGLE_HEIGHT;
    case 'list':
      return element.items.length * LIST_ROW_HEIGHT;
  }
}

function battery(raster: Raster, right: number, barHeight: number, percent: number, ink: number): void {
  const w = 22;
  const h = 11;
  const x = right - w;
  const y = (barHeight - h) / 2;
  raster.outline(x, y, w, h, ink, 1);
  raster.fill(x + w, y + 3, 2, h - 6, ink);
  raster.fill(x + 2, y + 2, Math.round(((w - 4) * Math.max(0, Math.min(100, percent))) / 100), h - 4, ink);
  const label = `${Math.round(percent)}%`;
  raster.text(x - 6 - textWidth(label, S), (barHeight - LINE_HEIGHT) / 2, label, ink, S);
}

function columns(pixels: number): number {
  return Math.max(1, Math.floor((pixels + S) / advance(S)));
}

/** Words onto lines of at most `width` characters; a word longer than a line is cut. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line === '') line = fit(word, width);
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = fit(word, width);
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

function accentOf(appId: string | null): number {
  if (appId === null) return 0x3c4043;
  let hash = 0;
  for (const char of appId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length]!;
}

function darker(colour: number): number {
  const channel = (shift: number) => Math.round(((colour >> shift) & 0xff) * 0.75) << shift;
  return channel(16) | channel(8) | channel(0);
}
