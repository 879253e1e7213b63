/**
 * The suite hashes passwords at a trivial scrypt cost (test/support/harness.ts sets the context's
 * testOnlyPasswordCost); servers must not. A context without the setting hashes at the full cost,
 * and nothing under src/ sets it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PASSWORD_COST } from '../../src/services/credentials.ts';
import { changePassword, createUser, verifyCredentials } from '../../src/services/users.ts';
import { ENGINES } from '../support/engines.ts';
import { type Harness, TEST_PASSWORD_COST, call, createHarness } from '../support/harness.ts';

const SRC = path.resolve(import.meta.dirname, '../../src');

describe.each(ENGINES)('password hashing cost (%s)', (engine) => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness(engine);
  });
  afterEach(async () => h.close());

  it('is the full cost in a context without the test-only setting, for new and changed passwords', async () => {
    const production = { ...h.ctx, testOnlyPasswordCost: undefined };
    const user = await createUser(production, { email: 'prod@example.com', password: 'password-1234', plan: 'GOLD' });
    const full = `scrypt$${PASSWORD_COST.N}$${PASSWORD_COST.r}$${PASSWORD_COST.p}$`;
    expect(PASSWORD_COST).toEqual({ N: 32768, r: 8, p: 1 });
    expect(await h.ctx.store.users.passwordHashOf(user.id)).toMatch(new RegExp(`^${full.replaceAll('$', '\\$')}`));
    expect((await verifyCredentials(production, 'prod@example.com', 'password-1234'))?.id).toBe(user.id);
    expect(await verifyCredentials(production, 'prod@example.com', 'password-12345')).toBeUndefined();

    await changePassword(production, user, 'password-1234', 'password-5678');
    expect(await h.ctx.store.users.passwordHashOf(user.id)).toMatch(new RegExp(`^${full.replaceAll('$', '\\$')}`));
    expect((await verifyCredentials(production, 'prod@example.com', 'password-5678'))?.id).toBe(user.id);
  });

  it("is the harness's trivial cost in tests, and such hashes sign in through the same route", async () => {
    const alice = await h.user({ email: 'alice@example.com' });
    const cheap = `scrypt$${TEST_PASSWORD_COST.N}$${TEST_PASSWORD_COST.r}$${TEST_PASSWORD_COST.p}$`;
    expect((await h.ctx.store.users.passwordHashOf(alice.user.id))!.startsWith(cheap)).toBe(true);
    const signIn = await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: 'alice@example.com', password: 'password-1234' },
    });
    expect(signIn.status, signIn.text).toBe(200);
    const refused = await call(h.app, 'POST', '/auth/session', {
      json: true,
      body: { email: 'alice@example.com', password: 'password-9999' },
    });
    expect(refused.status).toBe(401);
  });
});

describe('the test-only password cost', () => {
  it('is set nowhere under src/ but where it is declared and used', () => {
    const naming = fs
      .readdirSync(SRC, { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.(ts|js)$/.test(file))
      .filter((file) => fs.readFileSync(path.join(SRC, file), 'utf8').includes('testOnlyPasswordCost'))
      .sort();
    expect(naming).toEqual(['services/context.ts', 'services/users.ts']);
    // The context of the server and the admin commands is built in one place, which must leave the setting out.
    expect(fs.readFileSync(path.join(SRC, 'server/open-store.ts'), 'utf8')).toContain('const ctx: Context = {');
  });
});
