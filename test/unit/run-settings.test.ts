/**
 * A run's settings as one typed value: stored as versioned JSON, validated when read (rows from
 * before versions too), secrets apart, and turned into the agent's assignment by one function.
 */
import Value from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { assignmentOf } from '../../src/domain/assignment.ts';
import type { UserFile } from '../../src/domain/files.ts';
import {
  type RunSettings,
  StoredValueError,
  formatRunSettings,
  readRunSecrets,
  readRunSettings,
  runSecrets,
} from '../../src/domain/run-settings.ts';
import { Assignment } from '../../src/protocol/v1.ts';
import { runSettings } from '../support/fixtures.ts';

const settings: RunSettings = runSettings(7, {
  frameworkId: 6,
  deviceIds: [1, 2],
  files: [
    { id: 11, action: 'INSTALL' },
    { id: 12, action: 'COPY_TO_DEVICE' },
  ],
  testRunParameters: [{ key: 'LEVEL', value: '3' }],
  deviceLanguageCode: 'de_DE',
  applicationUsername: 'crawler',
  launchApp: false,
  deviceLocale: 'fi_FI',
  wifiEnabled: false,
  googleAccountEmail: 'qa@example.com',
});
const secrets = runSecrets('app-secret', 'google-secret');
const file = (id: number, name: string) =>
  ({ id, name, size: 10, sha256: 'ab', properties: { package_name: 'com.example' } }) as unknown as UserFile;

describe('run settings', () => {
  it('reads back what it stores, and holds no secret', () => {
    const json = formatRunSettings(settings);
    expect(JSON.parse(json).v).toBe(1);
    expect(json).not.toMatch(/Password/);
    expect(readRunSettings(json, 'run 1')).toEqual({ settings, inlineSecrets: null });
  });

  it('reads a row from before versions, taking its passwords out of the settings', () => {
    const { v: _version, ...fields } = settings;
    const old = JSON.stringify({
      ...fields,
      applicationPassword: 'app-secret',
      googleAccountPassword: 'google-secret',
    });
    expect(readRunSettings(old, 'run 1')).toEqual({ settings, inlineSecrets: secrets });
    const none = JSON.stringify({ ...fields, applicationPassword: null });
    expect(readRunSettings(none, 'run 1')).toEqual({ settings, inlineSecrets: null });
  });

  it('refuses what does not have the shape of its version, naming where without quoting the value', () => {
    const bad = [
      '{not json',
      JSON.stringify({ ...settings, v: 2 }),
      JSON.stringify({ ...settings, timeout: 'soon' }),
      JSON.stringify({ ...settings, scheduler: 'SOMETIMES' }),
      JSON.stringify({ ...settings, applicationPassword: 'leaked-secret' }),
      JSON.stringify({ projectId: 7, osType: 'ANDROID', files: [] }),
    ];
    for (const json of bad) {
      const error = (() => {
        try {
          readRunSettings(json, 'The settings of test run 9');
        } catch (caught) {
          return caught as Error;
        }
      })();
      expect(error, json).toBeInstanceOf(StoredValueError);
      expect(error!.message).toMatch(/^The settings of test run 9 /);
      expect(error!.message).not.toContain('leaked-secret');
    }
    expect(() =>
      readRunSecrets(JSON.stringify({ v: 1, applicationPassword: 5, googleAccountPassword: null }), 'x'),
    ).toThrow(StoredValueError);
  });

  it('has secrets only when a password is given', () => {
    expect(runSecrets(null, null)).toBeNull();
    expect(runSecrets('p', null)).toEqual({ v: 1, applicationPassword: 'p', googleAccountPassword: null });
  });
});

describe('the assignment of a device run', () => {
  const deviceRun = { id: 5, deviceId: 2, frameworkKind: 'crawler', timeLimit: 300 };

  it('puts the settings, the secrets and the files together, as the protocol describes an assignment', () => {
    const assignment = assignmentOf(
      deviceRun,
      settings,
      secrets,
      new Map([
        [11, file(11, 'app.apk')],
        [12, file(12, 'data.bin')],
      ]),
    );
    expect(Value.Check(Assignment, assignment)).toBe(true);
    expect(assignment).toEqual({
      deviceRunId: 5,
      deviceId: 2,
      kind: 'crawler',
      timeoutSeconds: 300,
      locale: 'de_DE',
      launchApp: false,
      parameters: { LEVEL: '3' },
      credentials: { username: 'crawler', password: 'app-secret' },
      deviceSettings: {
        locale: 'fi_FI',
        wifi: false,
        googleAccount: { email: 'qa@example.com', password: 'google-secret' },
      },
      files: [
        {
          id: 11,
          name: 'app.apk',
          action: 'INSTALL',
          size: 10,
          sha256: 'ab',
          properties: { package_name: 'com.example' },
          url: '/agent/v1/device-runs/5/files/11',
        },
        {
          id: 12,
          name: 'data.bin',
          action: 'COPY_TO_DEVICE',
          size: 10,
          sha256: 'ab',
          properties: { package_name: 'com.example' },
          url: '/agent/v1/device-runs/5/files/12',
        },
      ],
      // Recorded unless the settings say not to (docs/api.md#videos).
      video: true,
    });
    expect(assignmentOf(deviceRun, { ...settings, videoRecordingEnabled: false }, secrets, new Map()).video).toBe(
      false,
    );
  });

  it('asks for no device settings or sign-in the run does not ask for, and leaves out files no longer stored', () => {
    const plain = runSettings(7, { files: [{ id: 11, action: 'INSTALL' }] });
    const assignment = assignmentOf({ ...deviceRun, frameworkKind: null }, plain, null, new Map());
    expect(assignment).toMatchObject({
      kind: 'server-side',
      locale: 'en_US',
      launchApp: true,
      parameters: {},
      credentials: null,
      deviceSettings: null,
      files: [],
    });
    // Only the Wi-Fi asked for: the other settings stay as they are.
    expect(
      assignmentOf(
        deviceRun,
        { ...plain, deviceLocale: null, wifiEnabled: true, googleAccountEmail: null },
        null,
        new Map(),
      ).deviceSettings,
    ).toEqual({ locale: null, wifi: true, googleAccount: null });
    // A user name without a password (as the API allows) signs in with an empty one.
    expect(assignmentOf(deviceRun, { ...plain, applicationUsername: 'crawler' }, null, new Map()).credentials).toEqual({
      username: 'crawler',
      password: '',
    });
  });
});
