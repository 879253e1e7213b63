import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.ts';
import { isLegacyRequest, parseRunRequest } from '../../src/domain/run-config.ts';

describe('TestRunConfig parsing', () => {
  it('normalises a modern config', () => {
    const request = parseRunRequest({
      osType: 'android',
      frameworkId: '7',
      projectName: ' Shop ',
      deviceIds: [3, '4', 3],
      files: [{ id: 41, action: 'install' }, { id: '42' }],
      testRunParameters: [{ key: 'ENV', value: 'staging' }],
      timeout: '600',
      scheduler: 'serial',
      hookURL: 'https://ci.example.com/hook',
      launchApp: 'false',
    });
    expect(request).toMatchObject({
      osType: 'ANDROID',
      frameworkId: 7,
      projectName: 'Shop',
      deviceIds: [3, 4],
      files: [
        { id: 41, action: 'INSTALL' },
        { id: 42, action: null },
      ],
      testRunParameters: [{ key: 'ENV', value: 'staging' }],
      timeout: 600,
      scheduler: 'SERIAL',
      launchApp: false,
    });
    expect(isLegacyRequest(request)).toBe(false);
  });

  it('accepts files and device ids as comma-joined text, as form clients send them', () => {
    expect(parseRunRequest({ files: '41,42', deviceIds: '3, 4' })).toMatchObject({
      files: [{ id: 41 }, { id: 42 }],
      deviceIds: [3, 4],
    });
  });

  it('recognises the legacy start that names only a project', () => {
    expect(isLegacyRequest(parseRunRequest({ projectId: '12' }))).toBe(true);
    expect(isLegacyRequest(parseRunRequest({ projectId: '12', files: '41' }))).toBe(true);
  });

  it.each([
    [{ frameworkId: 'x' }, 'frameworkId'],
    [{ frameworkId: -1 }, 'frameworkId'],
    [{ osType: 'WINDOWS' }, 'osType'],
    [{ deviceIds: [] }, 'deviceIds'],
    [{ files: [{ id: 1, action: 'EXECUTE' }] }, 'files.action'],
    [{ timeout: 0 }, 'timeout'],
    [{ maxAutoRetriesCount: 6 }, 'maxAutoRetriesCount'],
    [{ hookURL: 'file:///etc/passwd' }, 'hookURL'],
    [{ testRunParameters: 'x' }, 'testRunParameters'],
    [{ testRunName: 'bad\u0001name' }, 'testRunName'],
  ])('refuses %j naming %s', (raw, parameter) => {
    try {
      parseRunRequest(raw);
      throw new Error('expected a rejection');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidParameterError);
      expect((error as InvalidParameterError).parameter).toBe(parameter);
    }
  });
});
