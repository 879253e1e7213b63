/**
 * Secrets (API keys, passwords, OAuth tokens, session cookies) never reach the log of a real server
 * process, even at its most verbose level.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliBudget, runCli, startCli } from '../support/cli.ts';
import { until } from '../support/until.ts';

const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });

describe('secrets in the log of a real server', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devicecloud-log-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it(
    'keeps keys, passwords, tokens and cookies out of the log, at the most verbose level',
    async () => {
      const admin = async (args: string[]) => {
        const result = await runCli(['admin', ...args, '--json', '--data-dir', dir]);
        if (result.code !== 0) throw new Error(result.stderr);
        return JSON.parse(result.stdout);
      };
      const password = 'Pa55-word-that-must-not-leak';
      const user = await admin(['create-user', '--email', 'logged@example.com', '--password', password]);
      const { token: agentToken } = await admin(['create-agent-token', '--name', 'log-host']);
      const server = startCli(['serve', '--port', '0', '--data-dir', dir, '--log-level', 'trace']);
      try {
        const [, base] = await server.waitFor(/running at (http:\/\/\S+)/);
        const secrets: string[] = [user.apiKey, password, agentToken];
        let sent = 0;
        const request = async (
          method: string,
          route: string,
          init: { headers?: Record<string, string>; body?: string } = {},
        ) => {
          sent += 1;
          const response = await fetch(`${base}${route}`, { method, headers: init.headers, body: init.body });
          return { status: response.status, headers: response.headers, text: await response.text() };
        };
        const form = { 'content-type': 'application/x-www-form-urlencoded' };

        expect((await request('GET', '/api/me', { headers: basic(user.apiKey) })).status).toBe(200);
        const grant = await request('POST', '/oauth/token', {
          headers: form,
          body: new URLSearchParams({
            client_id: 'testdroid-cloud-api',
            grant_type: 'password',
            username: 'logged@example.com',
            password,
          }).toString(),
        });
        const tokens = JSON.parse(grant.text) as { access_token: string; refresh_token: string };
        secrets.push(tokens.access_token, tokens.refresh_token);
        expect(
          (await request('GET', '/api/me', { headers: { authorization: `Bearer ${tokens.access_token}` } })).status,
        ).toBe(200);
        expect((await request('GET', `/api/me?access_token=${tokens.access_token}`)).status).toBe(200);
        // Refused (a password is never taken from a URL), and kept out of the log all the same.
        expect(
          (
            await request(
              'GET',
              `/oauth/token?client_id=testdroid-cloud-api&grant_type=password&username=logged%40example.com&password=${encodeURIComponent(password)}`,
            )
          ).status,
        ).toBe(400);
        const refreshed = await request('POST', '/oauth/token', {
          headers: form,
          body: new URLSearchParams({
            client_id: 'testdroid-cloud-api',
            grant_type: 'refresh_token',
            refresh_token: tokens.refresh_token,
          }).toString(),
        });
        secrets.push((JSON.parse(refreshed.text) as { access_token: string }).access_token);
        const session = await request('POST', '/auth/session', {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'logged@example.com', password }),
        });
        const cookie = String(session.headers.get('set-cookie')).split(';')[0]!;
        const csrf = (JSON.parse(session.text) as { csrfToken: string }).csrfToken;
        secrets.push(cookie.split('=')[1]!, csrf);
        expect((await request('GET', '/api/me', { headers: { cookie } })).status).toBe(200);
        // The dashboard's reveal answers the key, and confirming the sign-in takes the password.
        const json = { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' };
        expect(
          JSON.parse((await request('POST', '/auth/api-key', { headers: { cookie, 'x-csrf-token': csrf } })).text)
            .apiKey,
        ).toBe(user.apiKey);
        expect(
          (
            await request('POST', '/auth/session/confirm', {
              headers: json,
              body: JSON.stringify({ password: `${password}-confirm` }),
            })
          ).status,
        ).toBe(400);
        expect(
          (await request('POST', '/auth/session/confirm', { headers: json, body: JSON.stringify({ password }) }))
            .status,
        ).toBe(200);
        secrets.push(`${password}-confirm`);
        expect(
          (
            await request('POST', '/api/me/projects', {
              headers: { cookie, 'x-csrf-token': csrf, ...form },
              body: 'name=logged',
            })
          ).status,
        ).toBe(201);
        expect(
          (
            await request('POST', '/agent/v1/heartbeat', {
              headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
              body: '{"running":[],"unhealthy":[]}',
            })
          ).status,
        ).toBe(200);
        // Refused attempts carry secrets too: a wrong password, a password change, a wrong key that is almost right.
        await request('POST', '/oauth/token', {
          headers: form,
          body: new URLSearchParams({
            client_id: 'testdroid-cloud-api',
            grant_type: 'password',
            username: 'logged@example.com',
            password: `${password}-typo`,
          }).toString(),
        });
        await request('POST', '/auth/session', {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'logged@example.com', password: `${password}-typo` }),
        });
        await request('GET', '/api/me', { headers: basic(`${user.apiKey.slice(0, 31)}Z`) });
        await request('POST', '/api/me/password', {
          headers: { ...basic(user.apiKey), ...form },
          body: new URLSearchParams({ currentPassword: `${password}-typo`, newPassword: `${password}-new` }).toString(),
        });
        // Form parameters may arrive in the query string (docs/api.md#formats), a password with them.
        await request(
          'POST',
          `/api/me/password?currentPassword=${encodeURIComponent(`${password}-query`)}&newPassword=${encodeURIComponent(`${password}-query-new`)}`,
          { headers: basic(user.apiKey) },
        );
        await request(
          'GET',
          `/oauth/token?client_id=testdroid-cloud-api&grant_type=refresh_token&refresh_token=${tokens.refresh_token}`,
        );
        secrets.push(`${password}-typo`, `${user.apiKey.slice(0, 31)}Z`, `${password}-query`, `${password}-query-new`);
        // The key is reset last: its answer carries the new one, which must stay out of the log as well.
        const reset = await request('POST', '/api/me/reset-api-key', {
          headers: { ...basic(user.apiKey), accept: 'application/json' },
        });
        secrets.push((JSON.parse(reset.text) as { apiKey: string }).apiKey);

        // The server logs a request, URL and all, as it answers it: wait until every request sent is in the log.
        const logged = () =>
          server
            .output()
            .split('\n')
            .filter((line) => line.includes('"request completed"') && line.includes('"url":')).length;
        await until(logged, (lines) => lines >= sent, 10_000);
        const log = server.output();
        // The log is there and verbose (each request logged), so its silence about secrets means something.
        expect(sent).toBeGreaterThan(12);
        for (const secret of secrets) {
          expect(secret.length).toBeGreaterThan(10);
          expect(log.includes(secret), `a secret (${secret.slice(0, 4)}…) is in the log`).toBe(false);
          expect(
            log.includes(encodeURIComponent(secret)),
            `a secret (${secret.slice(0, 4)}…) is in the log, URL-encoded`,
          ).toBe(false);
          expect(
            log.includes(Buffer.from(`${secret}:`).toString('base64')),
            `a secret (${secret.slice(0, 4)}…) is in the log, base64`,
          ).toBe(false);
        }
      } finally {
        await server.stop();
      }
    },
    cliBudget(3),
  ); // two admin commands and the server
});
