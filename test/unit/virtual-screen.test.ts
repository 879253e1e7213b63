/**
 * Virtual devices draw their screens from the app's UI model: phone-like (status bar, title, the
 * elements), deterministic (the same screen at the same clock is the same bytes) and different
 * where the screens differ.
 */
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { glyphOf } from '../../src/agent/drivers/virtual/screen/bitmap-font.ts';
import { LiveScreen } from '../../src/agent/drivers/virtual/screen/live.ts';
import { Raster, textWidth } from '../../src/agent/drivers/virtual/screen/raster.ts';
import {
  type ElementBox,
  SCREEN_SIZES,
  hitTest,
  renderScreen,
  turned,
} from '../../src/agent/drivers/virtual/screen/render.ts';
import { appScreen, homeScreen, testsScreen, withBanner } from '../../src/agent/drivers/virtual/screen/ui-model.ts';

const CLOCK = { time: '09:41', battery: 80 };
const APP = 'com.devicecloud.sample';

/** How many pixels of a region differ from its first pixel: zero for a blank region. */
function inked(raster: Raster, x: number, y: number, w: number, h: number): number {
  const at = (px: number, py: number) => raster.data.readUInt32BE((py * raster.width + px) * 4);
  const background = at(x, y);
  let count = 0;
  for (let py = y; py < y + h; py++) for (let px = x; px < x + w; px++) if (at(px, py) !== background) count++;
  return count;
}

describe('virtual device screens', () => {
  it('draws the font: every printable character has a glyph, and text takes its width', () => {
    for (let code = 33; code < 127; code++)
      expect(
        glyphOf(String.fromCharCode(code)).some((row) => row !== 0),
        String.fromCharCode(code),
      ).toBe(true);
    expect(glyphOf(' ').every((row) => row === 0)).toBe(true);
    const raster = new Raster(100, 20);
    raster.text(2, 2, 'Hi', 0x000000, 2);
    expect(inked(raster, 2, 2, textWidth('Hi', 2), 14)).toBeGreaterThan(20);
    expect(inked(raster, 2 + textWidth('Hi', 2) + 1, 0, 40, 20)).toBe(0);
  });

  it('is a phone screen: status bar with time and battery, a title, the elements, in PNG', () => {
    const screen = appScreen('ANDROID', APP, '.SettingsActivity');
    expect(screen.title).toBe('Settings');
    expect(screen.elements.map((element) => element.kind)).toEqual(['toggle', 'toggle', 'toggle', 'field', 'button']);
    const raster = renderScreen(screen, SCREEN_SIZES.ANDROID, CLOCK);
    const png = PNG.sync.read(raster.png());
    expect([png.width, png.height]).toEqual([320, 640]);
    // The clock in the status bar, the title in the title bar, and a body that is not empty.
    expect(inked(raster, 8, 4, 70, 18)).toBeGreaterThan(40);
    expect(inked(raster, 12, 36, 120, 28)).toBeGreaterThan(40);
    expect(inked(raster, 0, 90, 320, 400)).toBeGreaterThan(2000);
  });

  it('draws the same screen at the same clock as the same bytes, and other screens or times differently', () => {
    const draw = (screen = appScreen('IOS', APP, 'CheckoutView'), clock = CLOCK) =>
      renderScreen(screen, SCREEN_SIZES.IOS, clock).png();
    expect(draw().equals(draw())).toBe(true);
    expect(draw().equals(draw(appScreen('IOS', APP, 'AboutView')))).toBe(false);
    expect(draw().equals(draw(undefined, { time: '09:42', battery: 80 }))).toBe(false);
    expect(draw().equals(draw(withBanner(appScreen('IOS', APP, 'CheckoutView'), 'Paid', 'ok')))).toBe(false);
  });

  it('builds screens from what the app declares and what the run does', () => {
    const signIn = appScreen('ANDROID', APP, 'SignIn', { username: 'alice@example.com' });
    expect(signIn.elements).toContainEqual({ kind: 'field', label: 'User name', value: 'alice@example.com' });
    expect(homeScreen('ANDROID', 'Pixel 8', ['com.android.chrome', APP]).elements).toContainEqual({
      kind: 'list',
      items: ['Chrome', 'Sample'],
    });
    expect(testsScreen('ANDROID', APP, ['LaunchTest#testAppInstalled']).elements).toContainEqual({
      kind: 'list',
      items: ['LaunchTest#testAppInstalled'],
    });
  });

  it('shows the live screen at the device clock, drawing again only what changed', () => {
    let now = Date.UTC(2026, 0, 1, 9, 41, 10);
    const live = new LiveScreen(homeScreen('ANDROID', 'Pixel 8', []), 'serial-1', () => now);
    const first = live.raster();
    expect(live.raster()).toBe(first);
    now += 60_000;
    expect(live.clock().time).toBe('09:42');
    expect(live.raster()).not.toBe(first);
    live.show(appScreen('ANDROID', APP, 'Main'));
    expect(live.screen().appId).toBe(APP);
  });

  it('draws a turned screen in landscape: wider than tall, its elements in two columns, taps landing on what is drawn', () => {
    const screen = appScreen('ANDROID', APP, '.SettingsActivity');
    const size = turned(SCREEN_SIZES.ANDROID, 'landscape');
    expect(size).toEqual({ width: 640, height: 320 });
    const boxes: ElementBox[] = [];
    const raster = renderScreen(screen, size, CLOCK, boxes);
    const png = PNG.sync.read(raster.png());
    expect([png.width, png.height]).toEqual([640, 320]);
    // Every element is drawn, inside the screen above the navigation; the form no longer fits
    // one column of a screen half as tall, so the last ones went to a second column on the right.
    expect(boxes.map((box) => box.index)).toEqual([0, 1, 2, 3, 4]);
    expect(boxes.every((box) => box.bottom <= 320 - 36 && box.right <= 640)).toBe(true);
    const right = boxes.filter((box) => box.left >= 320);
    expect(right.length).toBeGreaterThan(0);
    expect(boxes.filter((box) => box.left < 320).length).toBeGreaterThan(0);
    expect(right.at(-1)!.index).toBe(4);
    // Upright, the same screen is one column.
    const upright: ElementBox[] = [];
    renderScreen(screen, SCREEN_SIZES.ANDROID, CLOCK, upright);
    expect(new Set(upright.map((box) => box.left)).size).toBe(1);

    // A tap in the middle of each drawn element hits it, and something is drawn there.
    for (const box of boxes) {
      const x = Math.floor((box.left + box.right) / 2);
      const y = Math.floor((box.top + box.bottom) / 2);
      expect(hitTest(screen, size, x, y), `element ${box.index}`).toEqual({
        kind: 'element',
        index: box.index,
        row: null,
      });
      expect(inked(raster, box.left, box.top, box.right - box.left, box.bottom - box.top)).toBeGreaterThan(50);
    }
    // The Save button sits where the upright layout would put nothing: right of the first column.
    const save = boxes.find((box) => box.index === 4)!;
    expect(hitTest(screen, SCREEN_SIZES.ANDROID, save.left + 10, save.top + 10)).not.toEqual({
      kind: 'element',
      index: 4,
      row: null,
    });
    // Between the columns is nothing; the bottom is the system navigation still.
    expect(hitTest(screen, size, 320, boxes[0]!.top + 5)).toBeNull();
    expect(hitTest(screen, size, 600, 310)).toEqual({ kind: 'navigation', key: 'recents' });

    // A home screen of more apps than one column holds: the list runs on at the top of the next
    // column, and a tap there is on the row drawn there.
    const apps = Array.from({ length: 8 }, (_, index) => `com.example.app${index}`);
    const home = homeScreen('ANDROID', 'Pixel 8', apps);
    const homeBoxes: ElementBox[] = [];
    renderScreen(home, size, CLOCK, homeBoxes);
    const parts = homeBoxes.filter((box) => box.index === 1);
    expect(parts).toHaveLength(2);
    expect(parts[1]!.left).toBeGreaterThan(320);
    expect(parts[1]!.firstRow).toBe((parts[0]!.bottom - parts[0]!.top) / 36);
    expect(hitTest(home, size, 400, parts[1]!.top + 40)).toEqual({
      kind: 'element',
      index: 1,
      row: parts[1]!.firstRow + 1,
    });
    const lastRow = parts[1]!.firstRow + (parts[1]!.bottom - parts[1]!.top) / 36 - 1;
    expect(lastRow).toBe(7);
  });

  it('turns the live screen: landscape frames, and a video frame of the upright size with the screen shrunk into it', () => {
    const live = new LiveScreen(homeScreen('IOS', 'iPhone', ['com.apple.mobilesafari']), 'serial-1', () => 0);
    const upright = live.png();
    live.rotate('landscape');
    expect(live.size).toEqual({ width: 640, height: 300 });
    const png = PNG.sync.read(live.png());
    expect([png.width, png.height]).toEqual([640, 300]);
    expect(live.png().equals(upright)).toBe(false);
    const video = live.uprightRaster();
    expect([video.width, video.height]).toEqual([300, 640]);
    expect(live.uprightRaster()).toBe(video);
    // Bars above and below; the screen, shrunk to 300x140, in the middle.
    expect(inked(video, 0, 0, 300, 240)).toBe(0);
    expect(video.data.readUInt32BE(0)).toBe(0x000000ff);
    expect(inked(video, 0, 250, 300, 130)).toBeGreaterThan(1000);
    live.rotate('portrait');
    expect(live.png().equals(upright)).toBe(true);
    expect(live.uprightRaster()).toBe(live.raster());
  });
});
