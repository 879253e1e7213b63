import { describe, expect, it } from 'vitest';
import { modelName } from '../../src/agent/drivers/ios/models.ts';
import { allowsDevice, installableBuild, parseProfile } from '../../src/agent/drivers/ios/profile.ts';
import { languageOf, unsupportedSetting } from '../../src/agent/drivers/ios/settings.ts';
import {
  backButton,
  elementKey,
  parseUiTree,
  screenSignature,
  screenTitle,
  signInForm,
  tappables,
} from '../../src/agent/drivers/ios/ui-tree.ts';
import { LAB_DEVICES, provisioningProfile } from '../support/fake-ios/index.ts';

describe('provisioning profiles', () => {
  it('tells the kinds of build apart, and which devices a profile allows', () => {
    const development = parseProfile(provisioningProfile('development', { name: 'Dev' }));
    expect(development).toMatchObject({
      name: 'Dev',
      teamId: 'DEVCLOUD01',
      distribution: 'development',
      provisionedDevices: LAB_DEVICES.map((device) => device.udid),
    });
    expect(development.expiresAt?.toISOString()).toBe('2036-01-01T00:00:00.000Z');
    expect(parseProfile(provisioningProfile('ad-hoc')).distribution).toBe('ad-hoc');
    const enterprise = parseProfile(provisioningProfile('enterprise'));
    expect(enterprise.distribution).toBe('enterprise');
    const appStore = parseProfile(provisioningProfile('app-store'));
    expect(appStore.distribution).toBe('app-store');
    expect([development, enterprise, appStore].map(installableBuild)).toEqual([true, false, false]);
    expect(allowsDevice(development, LAB_DEVICES[0]!.udid.toLowerCase())).toBe(true);
    expect(allowsDevice(development, '00008110-FFFFFFFFFFFFFFFF')).toBe(false);
    expect(allowsDevice(enterprise, '00008110-FFFFFFFFFFFFFFFF')).toBe(true);
  });

  it('refuses what is not a profile', () => {
    expect(() => parseProfile(Buffer.from('just bytes'))).toThrow('holds no property list');
    expect(() => parseProfile(Buffer.from('<?xml version="1.0"?><plist><array></array></plist>'))).toThrow(
      'not a dictionary',
    );
  });
});

describe('device settings and names', () => {
  it('refuses Wi-Fi and Google account settings by name, and bad locales', () => {
    expect(unsupportedSetting({ locale: 'fi_FI', wifi: null, googleAccount: null })).toBeNull();
    expect(unsupportedSetting({ locale: null, wifi: false, googleAccount: null })).toMatch(/Wi-Fi off/);
    expect(unsupportedSetting({ locale: null, wifi: null, googleAccount: { email: 'a@b.c', password: 'x' } })).toMatch(
      /Google account/,
    );
    expect(unsupportedSetting({ locale: 'fi FI; rm', wifi: null, googleAccount: null })).toMatch(/not a locale/);
    expect(languageOf('pt-BR')).toEqual({ language: 'pt', locale: 'pt_BR' });
  });

  it('names iPhones by model', () => {
    expect(modelName('iPhone15,4')).toBe('Apple iPhone 15');
    expect(modelName('iPhone99,1')).toBe('Apple iPhone99,1');
  });
});

const rect = (x: number, y: number, width: number, height: number) => ({ x, y, width, height });
const node = (type: string, attrs: Record<string, unknown>, children: unknown[] = []) => ({
  type,
  isEnabled: '1',
  isVisible: '1',
  rect: rect(0, 0, 0, 0),
  ...attrs,
  children,
});

/** A WDA JSON source of a settings screen with a keyboard up. */
const settings = node('XCUIElementTypeApplication', { name: 'Sample', rect: rect(0, 0, 390, 844) }, [
  node('Window', { rect: rect(0, 0, 390, 844) }, [
    node('NavigationBar', { name: 'Settings', rect: rect(0, 47, 390, 44) }, [
      node('Button', { name: 'BackButton', label: 'Home', rect: rect(0, 47, 90, 44) }),
      node('Button', { label: 'Edit', rect: rect(320, 47, 60, 44) }),
    ]),
    node('StaticText', { label: 'Notifications', rect: rect(20, 120, 200, 30) }),
    node('Cell', { name: 'row2', rect: rect(0, 300, 390, 44) }, [node('StaticText', { label: 'Privacy' })]),
    node('Button', { label: 'Disabled', isEnabled: '0', rect: rect(20, 400, 100, 44) }),
    node('Button', { label: 'Hidden', isVisible: '0', rect: rect(20, 450, 100, 44) }),
    node('Cell', { name: 'row1', rect: rect(0, 200, 390, 44) }, [node('StaticText', { label: 'General' })]),
    node('TextField', { name: 'search', value: 'typed text', rect: rect(20, 500, 350, 44) }),
    node('Keyboard', { rect: rect(0, 600, 390, 244) }, [
      node('Key', { label: 'q', rect: rect(0, 600, 39, 50) }),
      node('Button', { label: 'return', rect: rect(300, 790, 90, 50) }),
    ]),
  ]),
]);

describe('the accessibility tree', () => {
  const tree = parseUiTree(settings);

  it("reads WDA's JSON source", () => {
    expect(tree.type).toBe('Application');
    expect(tree.children[0]!.children[3]).toMatchObject({
      type: 'Button',
      label: 'Disabled',
      enabled: false,
      visible: true,
    });
  });

  it('tells screens apart by structure, not by what was typed', () => {
    const typed = JSON.parse(JSON.stringify(settings).replace('typed text', 'other text'));
    expect(screenSignature(parseUiTree(typed))).toBe(screenSignature(tree));
    const other = JSON.parse(JSON.stringify(settings).replace('"Settings"', '"Privacy"'));
    expect(screenSignature(parseUiTree(other))).not.toBe(screenSignature(tree));
    expect(screenTitle(tree)).toBe('Settings');
    expect(screenTitle(parseUiTree(node('Application', {}, [node('StaticText', { label: 'Hello' })])))).toBe('Hello');
  });

  it('taps usable elements top to bottom and the way back last, never the keyboard', () => {
    expect(tappables(tree).map((element) => element.label ?? element.name)).toEqual(['Edit', 'row1', 'row2', 'Home']);
    expect(backButton(tree)?.label).toBe('Home');
    expect(elementKey(backButton(tree)!)).toBe('Button:Home@0,47');
    expect(
      backButton(
        parseUiTree(
          node('Application', {}, [
            node('NavigationBar', { rect: rect(0, 47, 390, 44) }, [
              node('Button', { label: 'Done', rect: rect(320, 47, 60, 44) }),
            ]),
          ]),
        ),
      ),
    ).toBeNull();
  });

  it('finds a sign-in form and its button', () => {
    const form = parseUiTree(
      node('Application', {}, [
        node('TextField', { name: 'username', rect: rect(20, 200, 350, 44) }),
        node('SecureTextField', { name: 'password', rect: rect(20, 260, 350, 44) }),
        node('Button', { label: 'Forgot password?', rect: rect(20, 100, 350, 44) }),
        node('Button', { label: 'Log in', rect: rect(20, 330, 350, 44) }),
      ]),
    );
    expect(signInForm(form)).toMatchObject({
      user: { name: 'username' },
      password: { name: 'password' },
      submit: { label: 'Log in' },
    });
    expect(signInForm(tree)).toBeNull();
  });
});
