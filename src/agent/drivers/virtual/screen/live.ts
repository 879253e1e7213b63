/**
 * The screen a virtual device shows now: a screen of the UI model (or a function that builds it
 * when drawn, for screens that follow a log), drawn at the device's clock. Screenshots, the video
 * and anything else that looks at the device draw from here, so they all show the same thing.
 */
import type { Raster } from './raster.ts';
import { type Clock, SCREEN_SIZES, type ScreenSize, renderScreen } from './render.ts';
import type { Screen } from './ui-model.ts';

export class LiveScreen {
  readonly size: ScreenSize;
  private current: Screen | (() => Screen);
  private cache: { key: string; raster: Raster } | null = null;
  private encoded: { raster: Raster; png: Buffer } | null = null;
  private readonly battery: number;

  constructor(
    initial: Screen,
    serial: string,
    private readonly now: () => number = Date.now,
  ) {
    this.current = initial;
    this.size = SCREEN_SIZES[initial.platform];
    let hash = 0;
    for (const char of serial) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    this.battery = 55 + (hash % 45);
  }

  show(screen: Screen | (() => Screen)): void {
    this.current = screen;
  }

  screen(): Screen {
    return typeof this.current === 'function' ? this.current() : this.current;
  }

  clock(): Clock {
    const date = new Date(this.now());
    const pad = (value: number) => String(value).padStart(2, '0');
    return { time: `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}`, battery: this.battery };
  }

  /** The screen as drawn now; drawn again only when what it shows changed. */
  raster(): Raster {
    const screen = this.screen();
    const clock = this.clock();
    const key = JSON.stringify([screen, clock]);
    if (this.cache?.key !== key) this.cache = { key, raster: renderScreen(screen, this.size, clock) };
    return this.cache.raster;
  }

  /** The screen as PNG; encoded again only when it was drawn again (live frames ask often). */
  png(): Buffer {
    const raster = this.raster();
    if (this.encoded?.raster !== raster) this.encoded = { raster, png: raster.png() };
    return this.encoded.png;
  }
}
