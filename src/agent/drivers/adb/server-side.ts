/**
 * Server-side packages (Appium server side, Calabash, anything with `run-tests.sh`) against a
 * real phone: the script runs on the host, in the agent's sandbox, with a small documented
 * environment that points its adb at this phone (ANDROID_SERIAL) through the run's own ADB
 * endpoint (adb-endpoint.ts: ADB_SERVER_SOCKET, a socket in the run's sandbox folder, and
 * ANDROID_ADB_SERVER_PORT), which knows this phone alone: the host's ADB server, which reaches
 * every phone, is never named to the script. In a sandbox without network (the public flavour's)
 * the host's loopback is out of reach: the script then runs under a relay inside its sandbox
 * (sandbox-relay.mjs) that offers the endpoint on the sandbox's own 127.0.0.1:5037 and makes the
 * script's forwards there (relay-forwards.ts). Meanwhile the app's CPU and memory
 * are sampled on the phone and its log is captured. A stop kills everything the script started
 * and force-stops the app.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import type { Sandbox } from '../host/sandbox.ts';
import {
  baseScriptEnv,
  collectScriptOutputs,
  prepareTestScript,
  runTestScript,
  withParameters,
} from '../host/test-script.ts';
import { type AdbEndpoint, openAdbEndpoint } from './adb-endpoint.ts';
import { RELAY_ADB_PORT, relayLauncher } from './relay-forwards.ts';
import { type AdbDevice, RunSession, infra } from './session.ts';

const PLAIN_PATH = '/usr/local/bin:/usr/bin:/bin';
const SDK_VARIABLES = ['ANDROID_HOME', 'ANDROID_SDK_ROOT'] as const;
const ENDPOINT_VARIABLES = ['ADB_SERVER_SOCKET', 'ANDROID_ADB_SERVER_ADDRESS', 'ANDROID_ADB_SERVER_PORT'] as const;

export interface AdbServerAddress {
  readonly host: string;
  readonly port: number;
}

export interface ServerSideHost {
  /** The host's ADB server, which the run's endpoint stands in front of. */
  readonly server: AdbServerAddress;
  /** The agent's environment: where adb and the Android SDK are. */
  readonly hostEnv: NodeJS.ProcessEnv;
  /** Whether the run's endpoint also takes TCP on the loopback (for Appium's `adb -P`). */
  readonly tcpEndpoint: boolean;
  readonly log: (message: string) => void;
  /** Where server-side scripts (customer code) run (../host/sandbox.ts). */
  readonly sandbox: Sandbox;
}

export async function runServerSide(
  job: Job,
  context: ExecutionContext,
  device: AdbDevice,
  host: ServerSideHost,
): Promise<ExecutionResult> {
  if (job.tests === null) return infra('no test package (a zip with run-tests.sh) was given');
  if (job.app !== null && !/\.apk$/i.test(job.app.name)) return infra(`${job.app.name} is not an Android app (APK)`);
  const appPackage = job.app?.properties.package_name ?? null;
  const session = new RunSession(job, context, device);
  const layout = await prepareTestScript({ ...job, tests: job.tests }, context);
  if ('failReason' in layout) return infra(layout.failReason);

  const refused = await session.install(job.app === null ? [] : [job.app], appPackage === null ? [] : [appPackage]);
  if (refused !== null) return refused;

  const { description } = device;
  // Without network, the host's loopback is out of the script's reach: a relay inside stands in for it.
  const socketPath = path.join(layout.box, 'adb.sock');
  const relay =
    host.sandbox.network === 'none' ? relayLauncher(socketPath, path.join(layout.box, 'adb-relay.sock')) : null;
  let endpoint: AdbEndpoint;
  try {
    endpoint = await openAdbEndpoint({
      serial: description.serial,
      upstream: host.server,
      socketPath,
      tcp: relay === null && host.tcpEndpoint,
      ...(relay !== null && { relayControlPath: relay.controlSocket }),
      log: host.log,
    });
  } catch (error) {
    return await session.failure(error, "opening the run's ADB endpoint");
  }
  const env: Record<string, string> = {
    ...baseScriptEnv(job, layout, { ...description, osType: 'ANDROID' }),
    PATH: scriptPath(host.hostEnv),
    APP_PATH: job.app?.path ?? '',
    APP_PACKAGE: appPackage ?? '',
    APP_ACTIVITY: job.app?.properties.main_activity ?? '',
    ANDROID_SERIAL: description.serial,
    ...endpoint.env(),
    ...(relay !== null && { ANDROID_ADB_SERVER_ADDRESS: '127.0.0.1', ANDROID_ADB_SERVER_PORT: String(RELAY_ADB_PORT) }),
  };
  // Appium's UiAutomator2 driver finds adb through these; they hold no secrets.
  for (const name of SDK_VARIABLES) if (host.hostEnv[name]) env[name] = host.hostEnv[name];

  context.step('RUNNING');
  let end: Awaited<ReturnType<typeof runTestScript>>;
  try {
    try {
      await session.monitor(appPackage);
    } catch (error) {
      return await session.failure(error, 'starting the device log');
    }
    // The endpoint's variables are reserved even where it sets none (no TCP port): a parameter must not point adb elsewhere.
    end = await runTestScript(layout, {
      sandbox: host.sandbox,
      env: withParameters(env, job.parameters, [...SDK_VARIABLES, ...ENDPOINT_VARIABLES]),
      signal: context.signal,
      // The app, adb and the SDK, read-only at their own paths; the endpoint's socket is in the run's box.
      readOnly: [...(job.app === null ? [] : [job.app.path]), ...sdkPaths(env), ...(relay?.readOnly ?? [])],
      ...(relay !== null && { launcher: relay.command }),
    });
  } finally {
    await endpoint.close();
  }
  const { exitCode, breach, startError } = end;
  if (appPackage !== null) await session.forceStop([appPackage]);
  const lost = !context.signal.aborted && (await session.lost());
  const artifacts = [...(await session.finish(true)), ...collectScriptOutputs(layout)];
  if (context.signal.aborted) return { outcome: 'STOPPED', failReason: null, testCases: null, exitCode, artifacts };
  if (lost) return infra('the phone went away during the tests', artifacts);
  if (startError !== null) return infra(`the sandbox could not start the tests: ${startError}`, artifacts);
  // A broken sandbox limit is the tests' doing: FAILED saying which limit, whatever they reported.
  if (breach !== null)
    return { outcome: 'CUSTOMER_FAULT', failReason: breach.message, testCases: null, exitCode, artifacts };
  return { outcome: 'COMPLETED', failReason: null, testCases: null, exitCode, artifacts };
}

/** The SDK folders and adb's folder the script's environment names. */
function sdkPaths(env: Record<string, string>): string[] {
  const adbDir = env.PATH?.split(':')[0];
  return [
    ...SDK_VARIABLES.map((name) => env[name]).filter((dir): dir is string => dir !== undefined),
    ...(adbDir !== undefined && !PLAIN_PATH.split(':').includes(adbDir) ? [adbDir] : []),
  ];
}

/** A plain PATH, plus wherever the host's adb is, so that scripts (and Appium) find it. */
export function scriptPath(hostEnv: NodeJS.ProcessEnv): string {
  const dirs = PLAIN_PATH.split(':');
  const sdk = hostEnv.ANDROID_HOME ?? hostEnv.ANDROID_SDK_ROOT;
  const candidates = [...(hostEnv.PATH ?? '').split(':'), ...(sdk ? [path.join(sdk, 'platform-tools')] : [])];
  const adbDir = candidates.find((dir) => dir !== '' && path.isAbsolute(dir) && fs.existsSync(path.join(dir, 'adb')));
  return adbDir === undefined || dirs.includes(adbDir) ? PLAIN_PATH : `${adbDir}:${PLAIN_PATH}`;
}
