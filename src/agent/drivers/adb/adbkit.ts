/**
 * adbkit, loaded with require: it is CommonJS with an `exports.default`, which Node's ESM loader
 * and vitest's transform hand out differently as a default import; `require` is the same in both.
 */
import { createRequire } from 'node:module';

type AdbkitModule = typeof import('@devicefarmer/adbkit');

export const { Adb } = createRequire(import.meta.url)('@devicefarmer/adbkit') as AdbkitModule;
export type AdbClient = ReturnType<AdbkitModule['Adb']['createClient']>;
