/**
 * Property lists (binary or XML), parsed without a word on the console. The plist package parses
 * XML with xmldom's default handler, which prints every complaint about malformed input to the
 * console: raw stderr, outside the structured log, a line for every upload anyone cares to send.
 * Our own xmldom parser, with a handler, checks the XML first: a malformed plist becomes an error
 * carrying xmldom's complaint (an upload's 400 message), and what reaches the plist package then
 * parses silently. Used by the server's inspection of uploads and by the iOS driver alike.
 */
import { DOMParser } from '@xmldom/xmldom';
import { parse, parseBinary } from 'plist';

/** The plist's value; throws an Error naming what is wrong. */
export function parsePlist(data: Buffer): unknown {
  return data.subarray(0, 8).toString('latin1') === 'bplist00'
    ? parseBinary(data)
    : parseXmlPlist(data.toString('utf8'));
}

export function parseXmlPlist(xml: string): unknown {
  const problems: string[] = [];
  try {
    new DOMParser({ onError: (_level, message) => void problems.push(message) }).parseFromString(xml, 'text/xml');
  } catch (error) {
    if (problems.length === 0) throw error;
  }
  // Warnings too: xmldom warns about what XML does not allow (an attribute without quotes), which
  // no tool that writes plists produces.
  if (problems.length > 0) throw new Error(`malformed XML (${problems[0]!.trim().slice(0, 200)})`);
  return parse(xml);
}
