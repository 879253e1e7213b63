import { describe, expect, it } from 'vitest';
import { applyConfigChange, defaultConfig } from '../../src/domain/project-config.ts';

const context = { projectType: 'IOS' as const, maxTimeout: 3600 };

describe('project config rules', () => {
  it('defaults the mode from the project type', () => {
    expect(defaultConfig(1, 'ANDROID').mode).toBe('FULL_RUN');
    expect(defaultConfig(1, 'IOS').mode).toBe('IOS');
  });

  it('takes form text and converts it', () => {
    const next = applyConfigChange(
      defaultConfig(1, 'IOS'),
      { mode: 'ios_crawler', usedDeviceGroupId: '12', timeout: '900', launchApp: 'false' },
      context,
    );
    expect(next).toMatchObject({ mode: 'IOS_CRAWLER', usedDeviceGroupId: 12, timeout: 900, launchApp: false });
  });

  it('allows IOS_CRAWLER only in IOS projects (docs/api.md#project-config)', () => {
    expect(() =>
      applyConfigChange(defaultConfig(1, 'XCTEST'), { mode: 'IOS_CRAWLER' }, { ...context, projectType: 'XCTEST' }),
    ).toThrow('needs a project of type IOS');
  });

  it('refuses a mode of the other OS and unknown modes, listing the allowed ones', () => {
    expect(() => applyConfigChange(defaultConfig(1, 'IOS'), { mode: 'APP_CRAWLER' }, context)).toThrow(
      'runs on ANDROID devices',
    );
    expect(() => applyConfigChange(defaultConfig(1, 'IOS'), { mode: 'TELEPATHY' }, context)).toThrow(
      /must be one of FULL_RUN, IOS, .*IOS_CRAWLER/,
    );
  });

  it.each([
    [{ timeout: '0' }, "'timeout' must be an integer between 1 and 3600"],
    [{ timeout: '7200' }, 'the most your plan allows'],
    [{ usedDeviceGroupId: 'abc' }, "'usedDeviceGroupId' must be a device group id"],
    [{ scheduler: 'RANDOM' }, 'PARALLEL, SERIAL, SINGLE'],
    [{ deviceLanguageCode: 'english' }, 'locale such as en_US'],
    [{ hookURL: 'javascript:alert(1)' }, 'http or https URL'],
    [{ launchApp: 'maybe' }, 'true or false'],
    [{ maxAutoRetriesCount: '9' }, 'between 0 and 5'],
    [{ limitationValue: 'com.example' }, "'limitationType'"],
  ])('refuses %j', (change, message) => {
    expect(() => applyConfigChange(defaultConfig(1, 'IOS'), change, context)).toThrow(message);
  });

  it('clears optional values with an empty parameter', () => {
    const withHook = applyConfigChange(
      defaultConfig(1, 'IOS'),
      { hookURL: 'https://ci.example.com/hook', usedDeviceGroupId: '3' },
      context,
    );
    expect(applyConfigChange(withHook, { hookURL: '', usedDeviceGroupId: '' }, context)).toMatchObject({
      hookURL: null,
      usedDeviceGroupId: null,
    });
  });
});
