/**
 * Citations of the repository's own docs point somewhere. Code and docs cite a section as
 * `docs/<file>.md#<anchor>`, and markdown links to `<file>.md#<anchor>` or `#<anchor>`; each must
 * name a heading (by GitHub's anchor rule) or an explicit `<a id>` that the file has. Citations of
 * documents the repository does not hold (the design notes' API contract and seed, by section
 * number) are gone for good: docs/api.md is the API's reference.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['src', 'test', 'bench', 'chaos', 'docs', 'README.md'];
const TEXT = /\.(ts|js|mjs|cjs|md|html|css|json|ya?ml|sh)$/;
const SKIPPED = new Set(['node_modules', 'test-output', 'dist']);

function filesUnder(relative: string): string[] {
  const full = path.join(ROOT, relative);
  if (!fs.existsSync(full)) return [];
  if (fs.statSync(full).isFile()) return [relative];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const child = path.join(relative, entry.name);
    if (entry.isDirectory()) return filesUnder(child);
    return TEXT.test(entry.name) ? [child] : [];
  });
}

/** GitHub's heading anchor: lowercase, punctuation but `-` and `_` dropped, each space a `-`. */
function slug(heading: string): string {
  const text = heading
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim();
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown file has: its headings' (a repeated one gets -1, -2, …) and its `<a id>`s. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading !== null) {
      const base = slug(heading[1] ?? '');
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  }
  return anchors;
}

interface Citation {
  readonly where: string;
  readonly file: string;
  readonly anchor: string;
}

function citationsIn(relative: string, text: string): Citation[] {
  const citations: Citation[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const where = `${relative}:${index + 1}`;
    for (const match of line.matchAll(/(?<![\w/.-])(docs\/[\w.-]+\.md)#([\w-]+)/g)) {
      citations.push({ where, file: match[1] ?? '', anchor: match[2] ?? '' });
    }
    if (!relative.endsWith('.md')) return;
    for (const match of line.matchAll(/\]\(([^)\s#]*)#([^)\s]+)\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z]+:/i.test(target)) continue;
      const file =
        target === '' ? relative : path.posix.normalize(path.posix.join(path.posix.dirname(relative), target));
      citations.push({ where, file, anchor: match[2] ?? '' });
    }
  });
  return citations;
}

const files = SCANNED.flatMap(filesUnder).map((file) => file.split(path.sep).join('/'));
const texts = new Map(files.map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8')]));

describe('doc citations', () => {
  it('follow GitHub anchor rules', () => {
    expect(slug('OAuth 2.0')).toBe('oauth-20');
    expect(slug('Abort, retry, timeout')).toBe('abort-retry-timeout');
    expect(slug('The `run-tests.sh` entry_point')).toBe('the-run-testssh-entry_point');
    expect(slug('Links: [drivers](drivers.md) & more')).toBe('links-drivers--more');
    expect([...anchorsOf('# A\n## A\n```\n# not\n```\n## A\n<a id="x-y"></a>text')]).toEqual([
      'a',
      'a-1',
      'a-2',
      'x-y',
    ]);
  });

  it('name anchors that exist', () => {
    const anchors = new Map<string, Set<string>>();
    const missing: string[] = [];
    let count = 0;
    for (const [file, text] of texts) {
      for (const citation of citationsIn(file, text)) {
        count++;
        const target = path.join(ROOT, citation.file);
        if (!anchors.has(citation.file)) {
          anchors.set(citation.file, fs.existsSync(target) ? anchorsOf(fs.readFileSync(target, 'utf8')) : new Set());
        }
        if (!anchors.get(citation.file)?.has(citation.anchor))
          missing.push(`${citation.where}: ${citation.file}#${citation.anchor}`);
      }
    }
    expect(count).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it('never cite documents the repository does not hold', () => {
    // Built from parts so that this file does not match itself.
    const gone = [
      new RegExp(['API', 'md'].join('\\.')),
      new RegExp(`\\bseed (?:${'§'}|rules? \\d|endpoints? \\d)`, 'i'),
    ];
    const left: string[] = [];
    for (const [file, text] of texts) {
      text.split('\n').forEach((line, index) => {
        if (gone.some((pattern) => pattern.test(line))) left.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(left).toEqual([]);
  });
});
