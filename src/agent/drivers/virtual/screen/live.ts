/**
 * The screen a virtual device shows now: a screen of the UI model (or a function that builds it
 * when drawn, for screens that follow a log), drawn at the device's clock and turned as the device
 * is. Screenshots, the video and anything else that looks at the device draw from here, so they
 * all show the same thing.
 */
import type { Orientation } from '../../../../domain/interactive.ts';
import type { Raster } from './raster.ts';
import { type Clock, SCREEN_SIZES, type ScreenSize, renderScreen, turned } from './render.ts';
import type { Screen } from './ui-model.ts';

export class LiveScreen {
  /** The screen upright: the size of the video, whichever way the device is turned. */
  readonly uprightSize: ScreenSize;
  private orientation: Orientation = 'portrait';
  private current: Screen | (() => Screen);
  private cache: { key: string; raster: Raster } | null = null;
  private encoded: { raster: Raster; png: Buffer } | null = null;
  private upright: { raster: Raster; fitted: Raster } | null = null;
  private readonly battery: number;

  constructor(
    initial: Screen,
    serial: string,
    private readonly now: () => number = Date.now,
  ) {
    this.current = initial;
    this.uprightSize = SCREEN_SIZES[initial.platform];
    let hash = 0;
    for (const char of serial) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
    this.battery = 55 + (hash % 45);
  }

  /** The screen as drawn now: in landscape, wider than tall. */
  get size(): ScreenSize {
    return turned(this.uprightSize, this.orientation);
  }

  show(screen: Screen | (() => Screen)): void {
    this.current = screen;
  }

  rotate(orientation: Orientation): void {
    this.orientation = orientation;
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
    const size = this.size;
    const key = JSON.stringify([screen, clock, size]);
    if (this.cache?.key !== key) this.cache = { key, raster: renderScreen(screen, size, clock) };
    return this.cache.raster;
  }

  /**
   * The screen in a frame of the upright size, for the video (one size for its whole length): a
   * landscape screen is shrunk to the frame's width and centred, upright to the viewer, with bars
   * above and below.
   */
  uprightRaster(): Raster {
    const raster = this.raster();
    if (raster.width === this.uprightSize.width && raster.height === this.uprightSize.height) return raster;
    if (this.upright?.raster !== raster)
      this.upright = { raster, fitted: raster.fittedInto(this.uprightSize.width, this.uprightSize.height, 0x000000) };
    return this.upright.fitted;
  }

  /** The screen as PNG; encoded again only when it was drawn again (live frames ask often). */
  png(): Buffer {
    const raster = this.raster();
    if (this.encoded?.raster !== raster) this.encoded = { raster, png: raster.png() };
    return this.encoded.png;
  }
}
