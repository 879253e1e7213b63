/**
 * The dashboard's domain rules come from the domain: the server writes `/final-states.js` from
 * src/domain/runs.ts, and no dashboard file keeps its own list of final states.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATES_PATH, finalStatesModule } from '../../src/api/dashboard-modules.ts';
import { DEVICE_RUN_STATES, FINAL_DEVICE_RUN_STATES } from '../../src/domain/runs.ts';
import { type Harness, call, createHarness } from '../support/harness.ts';

const WEB = path.resolve(import.meta.dirname, '../../src/web');

describe('modules the server writes for the dashboard', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('sqlite');
  });
  afterAll(async () => h.close());

  it('serves the final device-session states of the domain as an ES module, without sign-in', async () => {
    const answer = await call(h.app, 'GET', FINAL_STATES_PATH);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // A dashboard file: the dashboard's policy, not the sandbox of API answers.
    expect(String(answer.headers['content-security-policy'])).not.toContain('sandbox');
    expect(answer.text).toBe(finalStatesModule());
    const module = await import(`data:text/javascript;base64,${Buffer.from(answer.text).toString('base64')}`);
    expect(module.FINAL_DEVICE_SESSION_STATES).toEqual([...FINAL_DEVICE_RUN_STATES]);
    expect(Object.isFrozen(module.FINAL_DEVICE_SESSION_STATES)).toBe(true);
  });

  it("serves the browser's files only, not the type checker's", async () => {
    expect((await call(h.app, 'GET', '/app.js')).status).toBe(200);
    for (const file of ['/tsconfig.json', '/final-states.d.ts'])
      expect((await call(h.app, 'GET', file)).status).toBe(404);
  });

  it('leaves the dashboard no copy of its own', () => {
    const finals = [...FINAL_DEVICE_RUN_STATES];
    const others = DEVICE_RUN_STATES.filter((state) => !FINAL_DEVICE_RUN_STATES.has(state));
    const copies: string[] = [];
    for (const file of fs
      .readdirSync(WEB, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.js'))) {
      fs.readFileSync(path.join(WEB, file), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          // A line quoting most final states and no other is a list of them.
          const quoted = (state: string) => line.includes(`'${state}'`) || line.includes(`"${state}"`);
          if (finals.filter(quoted).length >= 3 && !others.some(quoted))
            copies.push(`src/web/${file}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(copies).toEqual([]);
  });
});
