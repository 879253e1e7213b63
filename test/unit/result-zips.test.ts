/** The names and contents of result zips (domain/result-zips.ts), with generated hostile names. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EntryNames, entrySegment, performanceCsv, worthCompressing } from '../../src/domain/result-zips.ts';

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');
/**
 * Names of any UTF-16 code units, the troublesome ones often. (Built here rather than with
 * fc.string's binary unit, whose first use takes about 10 s under vitest.)
 */
const HOSTILE_NAME = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '.',
        ' ',
        '/',
        '\\',
        ':',
        '*',
        'a',
        'A',
        'é',
        'e\u0301',
        '\u0000',
        '\u001b',
        '\ud800',
        '\udc00',
        'CON',
      ),
      fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
    ),
    { maxLength: 300 },
  )
  .map((units) => units.join(''));

describe('entry names', () => {
  it.each([
    ['../../etc/passwd', '.._.._etc_passwd'],
    ['/absolute', '_absolute'],
    ['C:\\Windows\\win.ini', 'C__Windows_win.ini'],
    ['a\u0000b\u001b[31m.txt', 'a_b_[31m.txt'],
    ['', 'file'],
    ['.', 'file'],
    ['..', 'file'],
    ['...', 'file'],
    ['  spaced  ', 'spaced'],
    ['trailing. . ', 'trailing'],
    ['CON', '_CON'],
    ['nul.txt', '_nul.txt'],
    ['com1', '_com1'],
    ['console.log', 'console.log'],
    ['\ud800x', '\ufffdx'],
    ['e\u0301', '\u00e9'],
    ['ok name (1).png', 'ok name (1).png'],
  ])('%j becomes %j', (name, expected) => {
    expect(entrySegment(name)).toBe(expected);
  });

  it('cuts long names to 200 bytes of whole characters, keeping the extension', () => {
    const cut = entrySegment(`${'é'.repeat(300)}.log`);
    expect(utf8(cut)).toBeLessThanOrEqual(200);
    expect(cut).toMatch(/^é+\.log$/);
    expect(entrySegment('x'.repeat(1000))).toBe('x'.repeat(200));
  });

  it('makes every name of a zip unique, as case-insensitive file systems compare them', () => {
    const names = new EntryNames();
    expect(
      ['Report.TXT', 'report.txt', 'report.txt', 'report (2).txt', '.env', '.env'].map((name) => names.add(null, name)),
    ).toEqual(['Report.TXT', 'report (2).txt', 'report (3).txt', 'report (2) (2).txt', '.env', '.env (2)']);
    const folder = names.folder(7, 'Pixel 8');
    expect(folder).toBe('7-Pixel 8');
    expect(names.add(folder, 'report.txt')).toBe('7-Pixel 8/report.txt');
    expect(names.add(folder, 'REPORT.txt')).toBe('7-Pixel 8/REPORT (2).txt');
    // A long name that repeats keeps its suffix and extension within the limit.
    const long = `${'y'.repeat(300)}.txt`;
    const first = names.add(null, entrySegment(long));
    const second = names.add(null, entrySegment(long));
    expect(second).not.toBe(first);
    expect(second.endsWith(' (2).txt')).toBe(true);
    expect(utf8(second)).toBeLessThanOrEqual(200);
  });

  it('never gives an unsafe or repeated name, whatever the input', () => {
    fc.assert(
      fc.property(fc.array(HOSTILE_NAME, { maxLength: 30 }), (raw) => {
        const names = new EntryNames();
        const made = raw.map((name) => names.add(null, entrySegment(name)));
        const unsafe = made.filter(
          (name) =>
            /^\.{0,2}$|[/\\\u0000-\u001f\u007f<>:"|?*]|[. ]$/.test(name) ||
            /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(name) ||
            utf8(name) > 255,
        );
        // One assertion a case: vitest's matchers are slow enough to dominate thousands of names.
        expect({ unsafe, repeated: made.length - new Set(made.map((name) => name.toLowerCase())).size }).toEqual({
          unsafe: [],
          repeated: 0,
        });
      }),
      { numRuns: 200 },
    );
  });
});

describe('performance CSV', () => {
  it('writes one line a sample, quoting what needs it and defusing formulas', () => {
    expect(
      performanceCsv([
        { timestamp: 1, cpuUsage: 0.5, memUsage: 100, packageName: 'com.example' },
        { timestamp: 2, cpuUsage: 0.25, memUsage: null, packageName: null },
        { timestamp: 3, cpuUsage: 1, memUsage: 5, packageName: 'a,"b"\nc' },
        { timestamp: 4, cpuUsage: 0, memUsage: 0, packageName: '=HYPERLINK("x")' },
        { timestamp: 5, cpuUsage: 0, memUsage: 0, packageName: '-2+3' },
      ]),
    ).toBe(
      'timestamp,cpuUsage,memUsage,packageName\r\n' +
        '1,0.5,100,com.example\r\n' +
        '2,0.25,,\r\n' +
        '3,1,5,"a,""b""\nc"\r\n' +
        `4,0,0,"'=HYPERLINK(""x"")"\r\n` +
        "5,0,0,'-2+3\r\n",
    );
  });
});

describe('compression', () => {
  it('deflates text and stores what is compressed already', () => {
    expect(worthCompressing('device.log', 'text/plain')).toBe(true);
    expect(worthCompressing('TEST-all.xml', 'application/xml')).toBe(true);
    expect(worthCompressing('home.png', 'application/octet-stream')).toBe(false);
    expect(worthCompressing('recording', 'video/mp4')).toBe(false);
    expect(worthCompressing('app.APK', 'application/octet-stream')).toBe(false);
  });
});
