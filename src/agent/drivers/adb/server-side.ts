/**
 * Server-side packages (Appium server side, Calabash, anything with `run-tests.sh`) against a
 * real phone: the script runs on the host, in the agent's sandbox, with a small documented
 * environment that points its adb at this phone (ANDROID_SERIAL) through the same ADB server
 * (ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT). In a sandbox without network (the public
 * flavour's) that TCP address is not reachable: the phone is reached through an endpoint of the
 * run's own, a socket inside its folder. Meanwhile the app's CPU and memory are sampled on the
 * phone and its log is captured. A stop kills everything the script started and force-stops the app.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ExecutionContext, ExecutionResult, Job } from '../../driver.ts';
import type { Sandbox } from '../host/sandbox.ts';
import { baseScriptEnv, collectScriptOutputs, prepareTestScript, runTestScript, withParameters } from '../host/test-script.ts';
import { type AdbDevice, RunSession, infra } from './session.ts';

const PLAIN_PATH = '/usr/local/bin:/usr/bin:/bin';
const SDK_VARIABLES = ['ANDROID_HOME', 'ANDROID_SDK_ROOT'] as const;

export interface AdbServerAddress {
  readonly host: string;
  readonly port: number;
}

export async function runServerSide(job: Job, context: ExecutionContext, device: AdbDevice, server: AdbServerAddress, hostEnv: NodeJS.ProcessEnv, sandbox: Sandbox): Promise<ExecutionResult> {
  if (job.tests === null) return infra('no test package (a zip with run-tests.sh) was given');
  if (job.app !== null && !/\.apk$/i.test(job.app.name)) return infra(`${job.app.name} is not an Android app (APK)`);
  const appPackage = job.app?.properties.package_name ?? null;
  const session = new RunSession(job, context, device);
  const layout = await prepareTestScript({ ...job, tests: job.tests }, context);
  if ('failReason' in layout) return infra(layout.failReason);

  const refused = await session.install(job.app === null ? [] : [job.app], appPackage === null ? [] : [appPackage]);
  if (refused !== null) return refused;

  const { description } = device;
  const env: Record<string, string> = {
    ...baseScriptEnv(job, layout, { ...description, osType: 'ANDROID' }),
    PATH: scriptPath(hostEnv),
    APP_PATH: job.app?.path ?? '',
    APP_PACKAGE: appPackage ?? '',
    APP_ACTIVITY: job.app?.properties.main_activity ?? '',
    ANDROID_SERIAL: description.serial,
    ANDROID_ADB_SERVER_ADDRESS: server.host,
    ANDROID_ADB_SERVER_PORT: String(server.port),
    ADB_SERVER_SOCKET: `tcp:${server.host}:${server.port}`,
  };
  // Appium's UiAutomator2 driver finds adb through these; they hold no secrets.
  for (const name of SDK_VARIABLES) if (hostEnv[name]) env[name] = hostEnv[name];

  context.step('RUNNING');
  try {
    await session.monitor(appPackage);
  } catch (error) {
    return await session.failure(error, 'starting the device log');
  }
  const { exitCode, breach } = await runTestScript(layout, {
    sandbox,
    env: withParameters(env, job.parameters, SDK_VARIABLES),
    signal: context.signal,
    // The app, adb and the SDK, read-only at their own paths.
    readOnly: [...(job.app === null ? [] : [job.app.path]), ...sdkPaths(env)],
  });
  if (appPackage !== null) await session.forceStop([appPackage]);
  const lost = !context.signal.aborted && (await session.lost());
  const artifacts = [...(await session.finish(true)), ...collectScriptOutputs(layout)];
  if (context.signal.aborted) return { outcome: 'STOPPED', failReason: null, testCases: null, exitCode, artifacts };
  if (lost) return infra('the phone went away during the tests', artifacts);
  return { outcome: 'COMPLETED', failReason: breach?.message ?? null, testCases: null, exitCode, artifacts, ...(breach !== null && { breach }) };
}

/** The SDK folders and adb's folder the script's environment names. */
function sdkPaths(env: Record<string, string>): string[] {
  const adbDir = env.PATH?.split(':')[0];
  return [...SDK_VARIABLES.map((name) => env[name]).filter((dir): dir is string => dir !== undefined), ...(adbDir !== undefined && !PLAIN_PATH.split(':').includes(adbDir) ? [adbDir] : [])];
}

/** A plain PATH, plus wherever the host's adb is, so that scripts (and Appium) find it. */
export function scriptPath(hostEnv: NodeJS.ProcessEnv): string {
  const dirs = PLAIN_PATH.split(':');
  const sdk = hostEnv.ANDROID_HOME ?? hostEnv.ANDROID_SDK_ROOT;
  const candidates = [...(hostEnv.PATH ?? '').split(':'), ...(sdk ? [path.join(sdk, 'platform-tools')] : [])];
  const adbDir = candidates.find((dir) => dir !== '' && path.isAbsolute(dir) && fs.existsSync(path.join(dir, 'adb')));
  return adbDir === undefined || dirs.includes(adbDir) ? PLAIN_PATH : `${adbDir}:${PLAIN_PATH}`;
}
