import { describe, expect, it } from 'vitest';
import { parsedRows } from '../../src/store/parsed-rows.ts';

describe('a JSON column parsed once per row (store/parsed-rows.ts)', () => {
  const counting = () => {
    const parses: string[] = [];
    const read = parsedRows((text: string) => {
      parses.push(text);
      return JSON.parse(text) as { files: { id: number }[] };
    }, 2);
    return { read, parses };
  };

  it('hands out the same value while the row holds the same text, and parses a changed text afresh', () => {
    const { read, parses } = counting();
    const first = read(1, '{"files":[{"id":7}]}');
    expect(read(1, '{"files":[{"id":7}]}')).toBe(first);
    const changed = read(1, '{"files":[{"id":8}]}');
    expect(changed.files[0]!.id).toBe(8);
    // Another row with the same text is another row: its value is its own.
    expect(read(2, '{"files":[{"id":8}]}')).not.toBe(changed);
    expect(parses).toHaveLength(3);
  });

  it('freezes what it keeps, all the way down, so that no reader changes it for the others', () => {
    const { read } = counting();
    const value = read(1, '{"files":[{"id":7}]}');
    expect(() => value.files.push({ id: 9 })).toThrow(TypeError);
    expect(() => {
      value.files[0]!.id = 9;
    }).toThrow(TypeError);
    expect(read(1, '{"files":[{"id":7}]}').files).toEqual([{ id: 7 }]);
  });

  it('keeps a bounded number of rows, the oldest out first', () => {
    const { read, parses } = counting();
    const text = '{"files":[]}';
    read(1, text);
    read(2, text);
    read(3, text);
    read(3, text);
    read(2, text);
    expect(parses).toHaveLength(3);
    read(1, text);
    expect(parses).toHaveLength(4);
  });
});

describe('deepFreeze (domain/deep-freeze.ts)', () => {
  it('freezes plain objects and arrays only, never a built-in prototype it is handed', async () => {
    const { deepFreeze } = await import('../../src/domain/deep-freeze.ts');
    const date = new Date(0);
    const value = deepFreeze({ list: [{ a: 1 }], proto: Object.prototype, arrays: Array.prototype, date });
    expect(Object.isFrozen(value.list[0])).toBe(true);
    expect(Object.isFrozen(Object.prototype)).toBe(false);
    expect(Object.isFrozen(Array.prototype)).toBe(false);
    expect(Object.isFrozen(date)).toBe(false);
  });
});
