/**
 * A 5×7 bitmap font of printable ASCII (32–126), drawn for this project, so that virtual devices
 * render their text with no font file, native canvas or download. Each glyph is seven rows of five
 * bits, each row one base-32 digit (the high bit is the leftmost pixel); characters outside the
 * table draw as '?'.
 */
export const GLYPH_WIDTH = 5;
export const GLYPH_HEIGHT = 7;

const FIRST = 32;
const ENCODED =
  '00000004444404aaa0000aavavaa4fke5u4op248j3cik8lid44800002488842842224804lel40044v4400000c48000v00000000cc01248g0ehjlphe4c4444eeh1248vv2421he26aiv22vgu11he68guhhev124888ehhehheehhf12c0cc0cc00cc0c48248g84200v0v008421248eh12404eh1dlleehhvhhhuhhuhhuehggghesihhhisvgguggvvggugggehgnhhfhhhvhhhe44444e72222ichikokihggggggvhrllhhhhhpljhhehhhhheuhhugggehhhliduhhukihfgge11uv444444hhhhhhehhhhha4hhhlllahha4ahhhhha444v1248gve88888e0g84210e22222e4ah0000000000v842000000e1fhfggmphhu00egghe11djhhf00ehvge698s8880fhhf1eggmphhh40c444e20622icggikokic44444e00qllhh00mphhh00ehhhe00uhugg00djf1100mpggg00ege1u88s889600hhhjd00hhha400hhlla00ha4ah00hhf1e00v248v244844244444448442448008l200';

const GLYPHS: readonly Uint8Array[] = Array.from({ length: ENCODED.length / GLYPH_HEIGHT }, (_, index) =>
  Uint8Array.from(ENCODED.slice(index * GLYPH_HEIGHT, (index + 1) * GLYPH_HEIGHT), (digit) => parseInt(digit, 32)),
);

/** The rows of a character's glyph: bit 4 of each row is its leftmost pixel. */
export function glyphOf(char: string): Uint8Array {
  return GLYPHS[(char.codePointAt(0) ?? 0) - FIRST] ?? GLYPHS['?'.charCodeAt(0) - FIRST]!;
}
