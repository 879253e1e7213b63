/**
 * A small RGBA raster: filled rectangles, rounded ones, outlines and bitmap text, which is all a
 * phone-like screen needs. Pixels are written through a 32-bit view, one store per pixel, so a
 * full frame renders in a millisecond or two; the bytes depend only on what was drawn.
 */
import { PNG } from 'pngjs';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphOf } from './bitmap-font.ts';

/** 0xRRGGBB. */
export type Colour = number;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function packed(colour: Colour): number {
  const r = (colour >> 16) & 0xff;
  const g = (colour >> 8) & 0xff;
  const b = colour & 0xff;
  return LITTLE_ENDIAN
    ? ((0xff << 24) | (b << 16) | (g << 8) | r) >>> 0
    : ((r << 24) | (g << 16) | (b << 8) | 0xff) >>> 0;
}

export class Raster {
  /** RGBA, row after row. */
  readonly data: Buffer;
  private readonly pixels: Uint32Array;

  constructor(
    readonly width: number,
    readonly height: number,
    background: Colour = 0xffffff,
  ) {
    this.data = Buffer.alloc(width * height * 4);
    this.pixels = new Uint32Array(this.data.buffer, this.data.byteOffset, width * height);
    this.pixels.fill(packed(background));
  }

  fill(x: number, y: number, w: number, h: number, colour: Colour): void {
    const x0 = Math.max(0, Math.floor(x));
    const y0 = Math.max(0, Math.floor(y));
    const x1 = Math.min(this.width, Math.floor(x + w));
    const y1 = Math.min(this.height, Math.floor(y + h));
    if (x1 <= x0) return;
    const value = packed(colour);
    for (let row = y0; row < y1; row++) this.pixels.fill(value, row * this.width + x0, row * this.width + x1);
  }

  /** A rectangle with its corners cut in `radius` steps: the look of a button or a card. */
  rounded(x: number, y: number, w: number, h: number, radius: number, colour: Colour): void {
    for (let row = 0; row < h; row++) {
      const fromEdge = Math.min(row, h - 1 - row);
      const inset = fromEdge < radius ? radius - Math.round(Math.sqrt(radius * radius - (radius - fromEdge) ** 2)) : 0;
      this.fill(x + inset, y + row, w - 2 * inset, 1, colour);
    }
  }

  outline(x: number, y: number, w: number, h: number, colour: Colour, thickness = 1): void {
    this.fill(x, y, w, thickness, colour);
    this.fill(x, y + h - thickness, w, thickness, colour);
    this.fill(x, y, thickness, h, colour);
    this.fill(x + w - thickness, y, thickness, h, colour);
  }

  /** Draws `text` with its top-left corner at (x, y); `scale` pixels per font pixel. */
  text(x: number, y: number, text: string, colour: Colour, scale = 2): void {
    let left = x;
    for (const char of text) {
      const rows = glyphOf(char);
      for (let row = 0; row < GLYPH_HEIGHT; row++) {
        const bits = rows[row]!;
        if (bits === 0) continue;
        for (let column = 0; column < GLYPH_WIDTH; column++)
          if (bits & (1 << (GLYPH_WIDTH - 1 - column)))
            this.fill(left + column * scale, y + row * scale, scale, scale, colour);
      }
      left += advance(scale);
    }
  }

  /**
   * This raster shrunk to fit a `width`x`height` one (keeping its proportions), centred on
   * `background`: each pixel the average of the pixels it covers, so that text stays legible.
   */
  fittedInto(width: number, height: number, background: Colour): Raster {
    const target = new Raster(width, height, background);
    const scale = Math.min(1, width / this.width, height / this.height);
    const w = Math.floor(this.width * scale);
    const h = Math.floor(this.height * scale);
    const x0 = Math.floor((width - w) / 2);
    const y0 = Math.floor((height - h) / 2);
    for (let y = 0; y < h; y++) {
      const sy0 = Math.floor(y / scale);
      const sy1 = Math.max(sy0 + 1, Math.min(this.height, Math.floor((y + 1) / scale)));
      for (let x = 0; x < w; x++) {
        const sx0 = Math.floor(x / scale);
        const sx1 = Math.max(sx0 + 1, Math.min(this.width, Math.floor((x + 1) / scale)));
        let r = 0;
        let g = 0;
        let b = 0;
        for (let sy = sy0; sy < sy1; sy++)
          for (let sx = sx0; sx < sx1; sx++) {
            const at = (sy * this.width + sx) * 4;
            r += this.data[at]!;
            g += this.data[at + 1]!;
            b += this.data[at + 2]!;
          }
        const count = (sy1 - sy0) * (sx1 - sx0);
        const to = ((y0 + y) * width + x0 + x) * 4;
        target.data[to] = Math.round(r / count);
        target.data[to + 1] = Math.round(g / count);
        target.data[to + 2] = Math.round(b / count);
      }
    }
    return target;
  }

  png(): Buffer {
    const png = new PNG({ width: this.width, height: this.height });
    this.data.copy(png.data);
    return PNG.sync.write(png);
  }
}

/** Horizontal room one character takes at `scale`, its spacing included. */
export function advance(scale: number): number {
  return (GLYPH_WIDTH + 1) * scale;
}

export function textWidth(text: string, scale: number): number {
  return text.length === 0 ? 0 : [...text].length * advance(scale) - scale;
}

/** `text` cut to `columns` characters, with an ellipsis of dots when cut. */
export function fit(text: string, columns: number): string {
  const chars = [...text];
  return chars.length <= columns ? text : `${chars.slice(0, Math.max(0, columns - 2)).join('')}..`;
}

export { GLYPH_HEIGHT };
