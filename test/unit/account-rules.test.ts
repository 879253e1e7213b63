/**
 * The account pages' pure rules: which scopes a run's result notifies, what a destination may be
 * for each channel (docs/api.md#notifications), the preferences a POST may change
 * (docs/api.md#preferences) and the period of statistics.
 */
import { describe, expect, it } from 'vitest';
import { parsePeriod } from '../../src/domain/account-figures.ts';
import { InvalidParameterError } from '../../src/domain/errors.ts';
import { hookDestinationRules } from '../../src/domain/hook-destinations.ts';
import {
  checkDestination,
  parseChannel,
  parseScope,
  runResultOf,
  scopesNotifiedBy,
} from '../../src/domain/notifications.ts';
import { checkPreferenceChanges, preferencesOf } from '../../src/domain/preferences.ts';
import { parseSmtpUrl } from '../../src/domain/smtp-url.ts';

const parameterOf = (action: () => unknown): string | undefined => {
  try {
    action();
  } catch (error) {
    if (error instanceof InvalidParameterError) return error.parameter;
    throw error;
  }
  return undefined;
};

describe('notification rules', () => {
  it('notifies ALL and TEST_RUN of every run, the others by its result', () => {
    expect(scopesNotifiedBy('FAILED')).toEqual(['ALL', 'TEST_RUN', 'TEST_RUN_FAILURE']);
    expect(scopesNotifiedBy('SUCCEEDED')).toEqual(['ALL', 'TEST_RUN', 'TEST_RUN_SUCCEEDED']);
    expect(scopesNotifiedBy('WARNING')).toEqual(['ALL', 'TEST_RUN']);
    expect(runResultOf(new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT']))).toBe('FAILED');
    expect(runResultOf(new Set(['SUCCEEDED', 'TIMEOUT']))).toBe('WARNING');
    expect(runResultOf(new Set(['SUCCEEDED', 'ABORTED']))).toBe('ABORTED');
    expect(runResultOf(new Set(['SUCCEEDED', 'EXCLUDED']))).toBe('SUCCEEDED');
  });

  it('takes channels and scopes in any case, and names the parameter of a wrong one', () => {
    expect(parseChannel(' slack ')).toBe('SLACK');
    expect(parseScope('test_run_failure')).toBe('TEST_RUN_FAILURE');
    expect(parameterOf(() => parseChannel('SMS'))).toBe('channel');
    expect(parameterOf(() => parseScope('MAINTENANCE'))).toBe('scope');
    expect(parameterOf(() => parseScope(undefined))).toBe('scope');
  });

  it('takes one plain address for e-mail and an outside http(s) URL for the others', () => {
    const rules = hookDestinationRules();
    expect(checkDestination('EMAIL', ' qa@example.com ', rules)).toBe('qa@example.com');
    expect(checkDestination('SLACK', 'https://hooks.slack.com/services/T/B/X', rules)).toContain('hooks.slack.com');
    for (const [channel, destination] of [
      ['EMAIL', 'Q A <qa@example.com>'],
      ['EMAIL', 'qa@example.com\r\nBcc: all@example.com'],
      ['EMAIL', 'qa@localhost'],
      ['EMAIL', ''],
      ['WEBHOOK', 'qa@example.com'],
      ['WEBHOOK', 'file:///etc/passwd'],
      ['WEBHOOK', 'http://10.0.0.8/ci'],
      ['SLACK', 'http://[::1]/x'],
      ['WEBHOOK', `https://example.com/${'x'.repeat(2001)}`],
    ] as const)
      expect(
        parameterOf(() => checkDestination(channel, destination, rules)),
        destination,
      ).toBe('destination');
    expect(checkDestination('WEBHOOK', 'http://10.0.0.8/ci', hookDestinationRules(['10.0.0.0/8']))).toBe(
      'http://10.0.0.8/ci',
    );
  });
});

describe('preferences', () => {
  const current = preferencesOf(null, 43_200);

  it('changes the test timeout within the plan, and nothing read-only', () => {
    expect(current.testTimeout).toBe(600);
    expect(checkPreferenceChanges({ testTimeout: '900' }, current, 3600)).toBe(900);
    expect(checkPreferenceChanges({ httpSessionMaxInactiveInterval: 43_200 }, current, 3600)).toBeUndefined();
    expect(parameterOf(() => checkPreferenceChanges({ testTimeout: 3601 }, current, 3600))).toBe('testTimeout');
    expect(parameterOf(() => checkPreferenceChanges({ testTimeout: '' }, current, 3600))).toBe('testTimeout');
    expect(parameterOf(() => checkPreferenceChanges({ testTimeout: true }, current, 3600))).toBe('testTimeout');
    expect(parameterOf(() => checkPreferenceChanges({ httpSessionMaxInactiveInterval: 5 }, current, 3600))).toBe(
      'httpSessionMaxInactiveInterval',
    );
  });
});

describe('periods and the SMTP setting', () => {
  it('reads startTime and endTime as epoch ms, in order', () => {
    expect(parsePeriod({})).toEqual({ from: null, to: null });
    expect(parsePeriod({ startTime: '10', endTime: 20 })).toEqual({ from: 10, to: 20 });
    expect(parameterOf(() => parsePeriod({ startTime: '-1' }))).toBe('startTime');
    expect(parameterOf(() => parsePeriod({ startTime: 20, endTime: 10 }))).toBe('endTime');
  });

  it('takes smtp:// and smtps:// URLs only', () => {
    expect(parseSmtpUrl('smtps://user:pw@mail.example.com').port).toBe('');
    expect(() => parseSmtpUrl('http://mail.example.com')).toThrow(/smtp:\/\//);
    expect(() => parseSmtpUrl('smtp://mail.example.com?starttls=maybe')).toThrow(/starttls/);
  });
});
