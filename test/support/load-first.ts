/**
 * Loaded before every test file (vitest.config.ts `setupFiles`). adbkit turns on bluebird's
 * cancellation as it loads, which bluebird refuses once any of its promises exist; the APK reader
 * shares that bluebird and makes promises as soon as an upload is inspected. A worker shares its
 * modules between files, so a file that uploaded an APK would make every later adb test file of that
 * worker fail to load adbkit ("cannot enable cancellation after promises are in use"). Loaded here,
 * adbkit comes first in every worker. (An agent process loads adbkit at start and never reads APKs.)
 */
import '../../src/agent/drivers/adb/adbkit.ts';
