import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildExamples } from '../../examples/build.ts';

const COMMITTED = path.resolve(import.meta.dirname, '../../examples/dist');

describe('examples/dist', () => {
  it('holds exactly what `npm run examples` builds, so the quick start files cannot drift from their sources', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'examples-'));
    try {
      const built = await buildExamples(dir);
      expect(fs.readdirSync(COMMITTED).sort()).toEqual(Object.keys(built).sort());
      for (const [name, file] of Object.entries(built)) {
        expect(
          fs.readFileSync(path.join(COMMITTED, name)).equals(fs.readFileSync(file)),
          `${name} differs: run npm run examples`,
        ).toBe(true);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
