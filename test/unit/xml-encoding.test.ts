import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { encodeJson } from '../../src/api/encode/json.ts';
import { encodeXml } from '../../src/api/encode/xml.ts';
import { rep } from '../../src/api/present/representation.ts';

// htmlEntities: numeric character references (&#13;) are decoded as any conforming XML parser does.
const parser = new XMLParser({ parseTagValue: false, trimValues: false, htmlEntities: true });

describe('one representation, two encodings', () => {
  const entity = rep('apiProject', {
    id: 7,
    name: `<a&b>]]>"' tab\tcr\rlf\n é 😀`,
    description: null,
    shared: false,
    ratio: 0.5,
    tags: ['x', 'y'],
    testRuns: [rep('apiTestRun', { id: 1, state: 'WAITING' }), rep('apiTestRun', { id: 2, state: 'FINISHED' })],
    empty: [],
    nested: rep('apiSoftwareVersion', { releaseVersion: '14', apiLevel: 34 }),
  });

  it('writes JSON with nulls kept and no type tags', () => {
    const json = JSON.parse(encodeJson(entity));
    expect(json).toEqual({
      id: 7,
      name: entity.name,
      description: null,
      shared: false,
      ratio: 0.5,
      tags: ['x', 'y'],
      testRuns: [
        { id: 1, state: 'WAITING' },
        { id: 2, state: 'FINISHED' },
      ],
      empty: [],
      nested: { releaseVersion: '14', apiLevel: 34 },
    });
    expect(Object.keys(json)).toEqual([
      'id',
      'name',
      'description',
      'shared',
      'ratio',
      'tags',
      'testRuns',
      'empty',
      'nested',
    ]);
  });

  it('writes well-formed XML that round-trips every character, nulls omitted, arrays wrapped', () => {
    const xml = encodeXml(entity);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?><apiProject>')).toBe(true);
    expect(xml).not.toContain('<description>');
    expect(xml).toContain('<tags><item>x</item><item>y</item></tags>');
    expect(xml).toContain('<testRuns><apiTestRun><id>1</id><state>WAITING</state></apiTestRun><apiTestRun><id>2</id>');
    const parsed = parser.parse(xml);
    expect(parsed.apiProject.name).toBe(entity.name);
    expect(parsed.apiProject.shared).toBe('false');
    expect(parsed.apiProject.nested).toEqual({ releaseVersion: '14', apiLevel: '34' });
  });
});

describe('XML lists', () => {
  it('keeps the order of items of different types and writes an empty list as an empty element', () => {
    const xml = encodeXml(
      rep('apiList', { data: [rep('a', { id: 1 }), rep('b', { id: 2 }), rep('a', { id: 3 })], none: [] }),
    );
    expect(xml).toContain('<data><a><id>1</id></a><b><id>2</id></b><a><id>3</id></a></data><none></none>');
  });
});

describe('text XML 1.0 cannot carry', () => {
  const entity = rep('apiTestCaseRun', {
    errorMessage:
      'bell\u0007 \u001b[31mred\u001b[0m vt\u000b nul\u0000 \ufffe\uffff lone\ud800 pair\ud83d\ude00 back\\slash',
  });

  it('is shown as \\uXXXX in XML, a lone surrogate as U+FFFD; the rest is kept', () => {
    const xml = encodeXml(entity);
    expect(xml).toContain(
      '<errorMessage>bell\\u0007 \\u001b[31mred\\u001b[0m vt\\u000b nul\\u0000 \\ufffe\\uffff lone\ufffd pair\ud83d\ude00 back\\slash</errorMessage>',
    );
  });

  it('is kept exactly in JSON, except a lone surrogate, which is no character (U+FFFD)', () => {
    const text = encodeJson(entity);
    expect(text).toContain('\\u001b[31m');
    expect(JSON.parse(text).errorMessage).toBe(
      'bell\u0007 \u001b[31mred\u001b[0m vt\u000b nul\u0000 \ufffe\uffff lone\ufffd pair\ud83d\ude00 back\\slash',
    );
    // A backslash before `ud800` in the text is text, not an escape.
    expect(JSON.parse(encodeJson(rep('x', { a: '\\ud800', b: '\\\ud800' })))).toEqual({ a: '\\ud800', b: '\\\ufffd' });
  });

  it('makes names that came from data (keys of a stored object) valid element names', () => {
    const xml = encodeXml(rep('apiTestRunConfig', { 'a b': 1, '1st': 2, 'x:y': 3, '': 4, 'é\u0001': 5, ok_name: 6 }));
    expect(xml).toContain('<a_b>1</a_b><_1st>2</_1st><x_y>3</x_y><_>4</_><__>5</__><ok_name>6</ok_name>');
  });
});
