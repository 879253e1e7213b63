/**
 * docs/api.md#paths-the-clients-call stays true: every path it marks served is in the route table
 * (method and path, with the aliases of docs/api.md#paths), and no route is a path it marks not
 * served, so that adding a route flips its row.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeTable } from '../../src/api/app.ts';
import { adminRoutes } from '../../src/api/routes/admin.ts';

const DOC = path.resolve(import.meta.dirname, '../../docs/api.md');
const HEADING = '## Paths the clients call';

interface Row {
  readonly methods: readonly string[];
  readonly path: string;
  readonly served: boolean;
  readonly line: number;
}

/** A path as both sides can compare it: no `/api` or `/api/v2` prefix, `/users/{id}` as `/me`, parameters as `{}`. */
function normalize(raw: string): string {
  return raw
    .replace(/^\/api(\/v2)?(?=\/)/, '')
    .replace(/:\w+|\{\w+\}/g, '{}')
    .replace(/^\/users\/\{\}(?=\/|$)/, '/me');
}

/** The rows of the table under HEADING: `| methods | path | client | here |`. */
function tableRows(markdown: string): Row[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(HEADING);
  if (start < 0) throw new Error(`docs/api.md has no '${HEADING}'`);
  const rows: Row[] = [];
  for (let index = start + 1; index < lines.length && !lines[index]!.startsWith('## '); index += 1) {
    const cells = lines[index]!.split('|').map((cell) => cell.trim());
    if (cells.length !== 6 || cells[1] === 'method' || /^-+$/.test(cells[1]!)) continue;
    const here = cells[4]!;
    if (!/^(served|not served)\b/.test(here))
      throw new Error(`docs/api.md:${index + 1}: the last cell must start with 'served' or 'not served': ${here}`);
    rows.push({
      methods: cells[1]!.split(',').map((method) => method.trim()),
      path: cells[2]!,
      served: here.startsWith('served'),
      line: index + 1,
    });
  }
  return rows;
}

function routeKeys(): Set<string> {
  const specs = [...routeTable({ version: 'test', flavour: 'private' }), ...adminRoutes];
  return new Set(specs.map((spec) => `${spec.method} ${normalize(spec.path)}`));
}

describe('docs/api.md#paths-the-clients-call', () => {
  const rows = tableRows(fs.readFileSync(DOC, 'utf8'));
  const routes = routeKeys();
  const keysOf = (row: Row) => row.methods.map((method) => `${method} ${normalize(row.path)}`);

  it('lists the clients’ paths, each once', () => {
    expect(rows.length).toBeGreaterThan(150);
    const keys = rows.flatMap(keysOf);
    expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([]);
  });

  it('serves every path it marks served', () => {
    const missing = rows
      .filter((row) => row.served)
      .flatMap((row) =>
        keysOf(row)
          .filter((key) => !routes.has(key))
          .map((key) => `docs/api.md:${row.line}: ${key}`),
      );
    expect(missing).toEqual([]);
  });

  it('marks no route as not served', () => {
    const wrong = rows
      .filter((row) => !row.served)
      .flatMap((row) =>
        keysOf(row)
          .filter((key) => routes.has(key))
          .map((key) => `docs/api.md:${row.line}: ${key}`),
      );
    expect(wrong).toEqual([]);
  });

  it('reads paths with the aliases of docs/api.md#paths', () => {
    expect(normalize('/api/v2/users/{id}/projects/{id}')).toBe('/me/projects/{}');
    expect(normalize('/users/:userId')).toBe('/me');
    expect(normalize('/me/runs/:runId/device-sessions/:deviceSessionId')).toBe('/me/runs/{}/device-sessions/{}');
    expect(normalize('/users/activate')).toBe('/users/activate');
  });
});
