/**
 * What the Appium client side tests share: the app their sessions install (the virtual device's
 * shop app) and a webdriverio client of a cloud's /wd/hub.
 */
import { remote } from 'webdriverio';
import type { User } from '../../src/domain/users.ts';
import type { Context } from '../../src/services/context.ts';
import * as fixtures from './fixtures.ts';

/** The shop app, uploaded by `user`, as a session's `app`. */
export const shopApp = (ctx: Context, user: User) =>
  fixtures.file(ctx, user, {
    name: 'shop.apk',
    inputType: 'APPLICATION',
    osType: 'ANDROID',
    properties: {
      package_name: 'com.example.shop',
      main_activity: 'com.example.shop.MainActivity',
      activities: 'com.example.shop.CartActivity,com.example.shop.MainActivity',
    },
  });

/** A webdriverio session through the cloud's hub at `hub`, failing at once rather than retrying. */
export const hubSession = (hub: URL, capabilities: Record<string, unknown>) =>
  remote({
    hostname: hub.hostname,
    port: Number(hub.port),
    path: '/wd/hub',
    logLevel: 'silent',
    connectionRetryCount: 0,
    capabilities: capabilities as WebdriverIO.Capabilities,
  });
