/**
 * The seam between the agent and devices. A driver knows one family of devices (virtual, adb,
 * ios): it lists them, runs one device run on one device, and cleans a device afterwards. The
 * agent's executor does everything around it (downloads, steps to the server, timeout, JUnit
 * parsing, uploads), so a driver stays small. Every driver passes the same conformance suite
 * (test/drivers/conformance.ts).
 */
import type { DeviceOsType } from '../domain/devices.ts';
import type { CleaningKind, DeviceSettings } from '../domain/flavours.ts';
import type { ExecutionKind } from '../domain/frameworks-kinds.ts';
import type { Input } from '../domain/interactive.ts';
import type { FormFactor } from '../domain/labels.ts';
import type { StepType } from '../domain/runs.ts';
import type { TestCase } from '../domain/test-cases.ts';

export interface DeviceDescription {
  /** Stable identity of the device on its host (adb serial, iOS UDID, virtual name). */
  readonly serial: string;
  readonly displayName: string;
  readonly manufacturer: string;
  readonly osType: DeviceOsType;
  readonly platform: string;
  /** Fixed by the service; no run changes it (docs/api.md#devices-and-device-groups). */
  readonly releaseVersion: string;
  readonly apiLevel: number | null;
  /** What this device can run. */
  readonly executionKinds: readonly ExecutionKind[];
  /** Phone or tablet, from what the device says of itself (it labels the device: docs/api.md#device-selection). */
  readonly formFactor?: FormFactor;
}

export type Health = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** A file the executor has downloaded for the run. */
export interface LocalFile {
  readonly path: string;
  /** The name it was uploaded with, e.g. `app-debug.apk`. */
  readonly name: string;
  /** Properties found at upload: package_name, main_activity, bundle_identifier, activities, ... */
  readonly properties: Readonly<Record<string, string>>;
}

export interface Job {
  readonly deviceRunId: number;
  readonly serial: string;
  readonly kind: ExecutionKind;
  readonly app: LocalFile | null;
  readonly tests: LocalFile | null;
  readonly data: readonly LocalFile[];
  /** Seconds; the executor enforces it through the abort signal as well. */
  readonly timeoutSeconds: number;
  /** Key/value parameters of the run, handed to tests as environment variables. */
  readonly parameters: Readonly<Record<string, string>>;
  readonly locale: string;
  /** Settings the run asks the device to take (private and enterprise flavours only). */
  readonly deviceSettings: DeviceSettings | null;
  readonly launchApp: boolean;
  /** Crawler sign-in, when the app needs one. */
  readonly credentials: { readonly username: string; readonly password: string } | null;
  /** An empty directory for this run's outputs; the driver may put anything there. */
  readonly workDir: string;
}

/**
 * Device settings a run may ask for on private and enterprise clouds, refused on the public one
 * (docs/api.md#deployment-flavours). The driver applies them before installing and `clean` puts the device back.
 */
export type { DeviceSettings } from '../domain/flavours.ts';

export interface PerformanceSample {
  /** Epoch milliseconds. */
  readonly timestamp: number;
  /** 0..1 of one device's CPU capacity. */
  readonly cpuUsage: number;
  /** Kilobytes; null where the device does not tell (go-ios reports no memory figure). */
  readonly memUsage: number | null;
  readonly packageName: string | null;
}

export interface ExecutionContext {
  /** Aborted on user abort and on timeout; the driver must stop promptly and return what it has. */
  readonly signal: AbortSignal;
  /** The device run moved to a new step (PREPARING, INSTALL, RUNNING, ...). */
  step(type: StepType): void;
  /** A CPU/memory sample of the app or tests under test, about once a second while tests run. */
  sample(sample: PerformanceSample): void;
  /**
   * Safe extraction of an uploaded zip (path traversal, bombs and links refused, the settings'
   * limits counted while writing); a zip that cannot be unpacked rejects with a CustomerFault.
   */
  unzip(zipPath: string, destDir: string): Promise<void>;
  /**
   * Appium client side runs only (docs/api.md#appium-client-side): relays the client's WebDriver
   * commands to `handle` until the session ends, and says how it ended.
   */
  readonly webdriver?: WebDriverChannel;
  /**
   * Interactive sessions only (docs/api.md#interactive-sessions): relays the user's input to
   * `device` and its screen to the user until the session ends, and says how it ended.
   */
  readonly interactive?: InteractiveChannel;
}

/** An input as the driver receives it: an app to install is downloaded first. */
export type DeviceInput =
  Exclude<Input, { action: 'install' }> | { readonly action: 'install'; readonly app: LocalFile };

/** Thrown by an InteractiveDevice for input the device cannot take (a point off its screen): a 400 for the user. */
export class InputRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputRefused';
  }
}

/** What a driver does for an interactive session. */
export interface InteractiveDevice {
  /** Does one input; answers what the user gets back (a screenshot: base64 PNG), or null. */
  input(input: DeviceInput): Promise<unknown>;
  /** The screen now, as PNG; the relay sends it on only when it changed. */
  frame(): Promise<Buffer>;
  /** How often the screen is looked at for changes. */
  readonly frameIntervalMs: number;
  /** The device's log from now on, line by line, until `signal` aborts (absent: the device has none). */
  log?(signal: AbortSignal): AsyncIterable<string>;
}

export interface InteractiveChannel {
  serve(device: InteractiveDevice): Promise<InteractiveEnd>;
}

export interface InteractiveEnd {
  /** released: by its user (or an admin); idle: no input within the idle timeout; stopped: time limit or abort. */
  readonly reason: 'released' | 'idle' | 'stopped';
  readonly inputs: number;
  readonly frames: number;
  /** The log of the inputs. */
  readonly log: string;
}

/** One WebDriver command as the client sent it; `path` is below /wd/hub (`/session` for newSession). */
export interface WebDriverRequest {
  readonly method: string;
  readonly path: string;
  /** The parsed JSON body, or undefined when it had none. */
  readonly body: unknown;
  /** The body as the client sent it (JSON text), when there is one: a handler that relays it sends it as it is. */
  readonly text?: string;
}

/** The answer relayed to the client unchanged: a W3C answer or error. */
export interface WebDriverReply {
  readonly status: number;
  readonly body: unknown;
  /** The body as JSON text, when the handler got it as text: relayed as it is, not parsed and written again. */
  readonly text?: string;
}

export type WebDriverHandler = (request: WebDriverRequest) => Promise<WebDriverReply>;

export interface WebDriverChannel {
  serve(handle: WebDriverHandler): Promise<SessionEnd>;
}

export interface SessionEnd {
  /**
   * deleted: by its client; idle: no command within newCommandTimeout (or the client vanished);
   * refused: the device's Appium server did not start it; ended: the cloud ended it (aborted,
   * queue or client gone); stopped: the run's signal fired (timeout, abort).
   */
  readonly reason: 'deleted' | 'idle' | 'refused' | 'ended' | 'stopped';
  /** Failed when the client said so (`bitbar:setResult`), the session idled out, or did not start. */
  readonly passed: boolean;
  readonly message: string | null;
  readonly commands: number;
  /** Screenshots the client took, and one taken when the session ended failed. */
  readonly artifacts: readonly Artifact[];
}

export type ArtifactKind = 'junit' | 'log' | 'screenshot' | 'output' | 'video';

export interface Artifact {
  readonly kind: ArtifactKind;
  /** A file on the agent's disk, inside the job's workDir. */
  readonly path: string;
  /** The name users see. */
  readonly name: string;
}

export type ExecutionOutcome =
  /** The tests ran; their results decide SUCCEEDED or FAILED. */
  | 'COMPLETED'
  /** Something outside the tests went wrong (install failed, device lost): WARNING, retryable. */
  | 'INFRA_ERROR'
  /**
   * The device cannot do what the run asked of it (a setting it cannot take, an account that will
   * not sign in: a wrong password, a second factor): WARNING for the user, but neither held
   * against the device nor retried, since another try or another device would end the same.
   */
  | 'REFUSED'
  /**
   * The customer's package or its output made the run fail: it cannot be unpacked, has no
   * run-tests.sh, broke a limit of its sandbox (memory, processes, disk, time), left results the
   * agent cannot read. FAILED for the user with `failReason` saying why; like REFUSED, neither held
   * against the device nor retried. A driver returns it, or throws a CustomerFault from anywhere.
   */
  | 'CUSTOMER_FAULT'
  /** The signal fired (timeout or abort); the executor knows which. */
  | 'STOPPED';

/** Thrown where the customer's package or output is at fault; the message is what the user reads. */
export class CustomerFault extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CustomerFault';
  }
}

export interface ExecutionResult {
  readonly outcome: ExecutionOutcome;
  /** Why, for INFRA_ERROR and for a COMPLETED run whose tests failed without results. */
  readonly failReason: string | null;
  /** Test cases the driver knows directly (instrumentation, crawler); else JUnit artifacts are parsed. */
  readonly testCases: readonly TestCase[] | null;
  /** Exit code of the test process where there is one (server-side packages). */
  readonly exitCode: number | null;
  readonly artifacts: readonly Artifact[];
}

/** What a recording ends with: the video file, or why there is none. */
export type VideoOutcome = { readonly file: string } | { readonly file: null; readonly reason: string };

/** A recording of a device's screen in progress (docs/drivers.md#videos). */
export interface Recording {
  /** Ends the recording and finishes the file; never rejects (a failure is a reason). */
  stop(): Promise<VideoOutcome>;
}

export interface CleanResult {
  readonly ok: boolean;
  /** What was done, for the log, and why it failed when it did (the server says "cleaning failed"). */
  readonly report: string;
}

export interface Driver {
  readonly name: string;
  listDevices(): Promise<DeviceDescription[]>;
  health(serial: string): Promise<Health>;
  execute(job: Job, context: ExecutionContext): Promise<ExecutionResult>;
  /**
   * Removes what runs installed, clears browser data, puts settings back, then (FULL, the
   * default) reboots and verifies (docs/api.md#deployment-flavours). The public cloud cleans LIGHT.
   */
  clean(serial: string, kind?: CleaningKind): Promise<CleanResult>;
  /**
   * Starts recording the device's screen into a video file in `dir` (an empty folder of the
   * job's); the executor starts it before a device session's first step and stops it after its
   * last, so the video covers the whole session (docs/drivers.md#videos). Never rejects: a device
   * that cannot record answers a recording that ends with the reason.
   */
  record(serial: string, dir: string): Promise<Recording>;
  /**
   * The host tools this driver needs and cannot find, each as the sentence the agent logs at
   * start (what is missing, which package brings it, what does not work without it).
   */
  missingTools(): readonly string[];
  close(): Promise<void>;
}
