/**
 * Text from anywhere, for property tests: any code point (lone surrogates included), with the
 * characters that break XML drawn often, and a strict well-formedness check of XML.
 *
 * fast-xml-parser's XMLValidator checks structure and names but not characters (it accepts
 * `<a>\u0001</a>`), so saxes, a conforming XML 1.0 parser, checks the characters as well.
 */
import fc from 'fast-check';
import { XMLValidator } from 'fast-xml-parser';
import { SaxesParser } from 'saxes';

const TROUBLE = [
  '\u0000',
  '\u0001',
  '\u0008',
  '\u000b',
  '\u000c',
  '\u001b',
  '\u001f',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ufffe',
  '\uffff',
  '\r',
  '\t',
  '\n',
  '<',
  '>',
  '&',
  '"',
  "'",
  ']]>',
  '\ud83d\ude00',
  '\\',
  '\\ud800',
  '\u0085',
  '\u2028',
];

/** Any text: arbitrary code points, or the troublesome characters mixed together. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.oneof(fc.constantFrom(...TROUBLE), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
    maxLength: 20,
  }),
);

/** Why `xml` is not a well-formed XML 1.0 document, or null when it is. */
export function notWellFormed(xml: string): string | null {
  const validated = XMLValidator.validate(xml);
  if (validated !== true)
    return `XMLValidator: ${validated.err.msg} (line ${validated.err.line}, col ${validated.err.col})`;
  const parser = new SaxesParser({ xmlns: false });
  let error: string | null = null;
  parser.on('error', (cause) => {
    error ??= `saxes: ${cause.message}`;
  });
  parser.write(xml).close();
  return error;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `json` is not JSON that strict decoders read (it must parse, and hold no lone surrogate), or null. */
export function notStrictJson(json: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return `JSON.parse: ${(error as Error).message}`;
  }
  const strings: string[] = [];
  JSON.stringify(parsed, (key, value: unknown) => {
    strings.push(key);
    if (typeof value === 'string') strings.push(value);
    return value;
  });
  const bad = strings.find((text) => LONE_SURROGATE.test(text));
  return bad === undefined ? null : `a lone surrogate in ${JSON.stringify(bad)}`;
}
