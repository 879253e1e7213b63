/**
 * What XML 1.0 can carry, and how text that came from elsewhere (test output, agents, stored
 * configs) is made to fit. Both XML producers (the API's encoder and the JUnit report) use these,
 * so that every XML answer parses whatever the source of its text (docs/api.md#text-that-xml-cannot-carry).
 *
 * XML 1.0 forbids most C0 controls (even as `&#1;`), U+FFFE and U+FFFF; a lone surrogate is not
 * a character at all and cannot be written as UTF-8. Tab, line feed and carriage return are fine.
 */

const CONTROLS = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\ufffe\\uffff';
const LONE_SURROGATE = '[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]';

/** Matches one character XML 1.0 forbids (a C0 control, U+FFFE, U+FFFF, or a lone surrogate). */
export const NOT_XML_CHARACTER = new RegExp(`[${CONTROLS}]|${LONE_SURROGATE}`);
const NOT_XML_CHARACTERS = new RegExp(NOT_XML_CHARACTER.source, 'g');

/** As NOT_XML_CHARACTER, and also the five characters markup needs escaped, and CR (kept exactly as `&#13;`). */
const XML_TEXT_SPECIAL = new RegExp(`[&<>"'\\r${CONTROLS}]|${LONE_SURROGATE}`, 'g');
// The quick test of whether text needs any of that (any surrogate, paired or not, says maybe).
const MAYBE_SPECIAL = new RegExp(`[&<>"'\\r${CONTROLS}\\ud800-\\udfff]`);
const MAYBE_NOT_XML = new RegExp(`[${CONTROLS}\\ud800-\\udfff]`);

const ENTITY: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\r': '&#13;',
};

/**
 * The stand-in for a character XML cannot carry: a lone surrogate (broken UTF-16, not a character)
 * becomes U+FFFD as any UTF-8 encoder would write it; a real character (ESC of an ANSI colour,
 * a bell, U+FFFF) is shown as the six characters `\u001b`, so a failure message stays readable.
 */
export function xmlStandIn(char: string): string {
  const code = char.charCodeAt(0);
  if (code >= 0xd800 && code <= 0xdfff) return '\ufffd';
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

const escapeChar = (char: string): string => ENTITY[char] ?? xmlStandIn(char);

/** Text (or an attribute value) ready to go between tags or quotes: escaped and XML-safe. */
export function escapeXmlText(text: string): string {
  return MAYBE_SPECIAL.test(text) ? text.replace(XML_TEXT_SPECIAL, escapeChar) : text;
}

/** Text with the characters XML cannot carry replaced, for producers that escape markup themselves. */
export function xmlSafe(text: string): string {
  return MAYBE_NOT_XML.test(text) ? text.replace(NOT_XML_CHARACTERS, xmlStandIn) : text;
}

// Element names are kept to ASCII letters, digits, `_`, `-` and `.`: a subset of XML Names that
// every parser accepts (XML 1.0 editions and parsers disagree about other letters), and without
// ':', which would be read as a namespace prefix.
const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const NOT_NAME_CHARACTER = /[^A-Za-z0-9_.-]/gu;

/**
 * An element name for `name`: itself when it is one (every name of our own types and fields),
 * else with each character a name cannot hold replaced by `_` (and `_` in front when it cannot
 * start one), for names that came from data such as the keys of a stored object.
 */
export function xmlName(name: string): string {
  if (XML_NAME.test(name)) return name;
  const replaced = name.replace(NOT_NAME_CHARACTER, '_');
  return XML_NAME.test(replaced) ? replaced : `_${replaced}`;
}
