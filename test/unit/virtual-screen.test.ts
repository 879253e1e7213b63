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
import { SCREEN_SIZES, renderScreen } from '../../src/agent/drivers/virtual/screen/render.ts';
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
});
