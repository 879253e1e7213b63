/**
 * The agent ⇄ server protocol, version 1: plain JSON over HTTP, pulled by the agent like a CI
 * runner. The agent says hello with its devices, long-polls claims for its idle devices,
 * heartbeats (which renews the leases of its running device runs and tells it which to stop),
 * reports steps, samples, artifacts and results, and reports each device clean again. Every
 * report carries the device run's id and a sequence number, so a retried request is applied once.
 * Both sides validate messages against these schemas.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { DEVICE_OS_TYPES } from '../domain/devices.ts';
import { FORM_FACTORS } from '../domain/labels.ts';
import { FILE_ACTIONS } from '../domain/files.ts';
import { CLEANING_KINDS, FLAVOURS } from '../domain/flavours.ts';
import { EXECUTION_KINDS } from '../domain/frameworks-kinds.ts';
import { AGENT_STEP_TYPES, DEVICE_RUN_OUTCOMES, type DeviceRunState } from '../domain/runs.ts';

/**
 * null, or the schema. Null comes first because validation coerces types (for form-encoded
 * requests): tried first, a number would turn null into 0 and a string into "".
 */
const Nullable = <S extends TSchema>(schema: S) => Type.Union([Type.Null(), schema]);

export const PROTOCOL_VERSION = 1;
export const PROTOCOL_PREFIX = '/agent/v1';

// Bounded by what the store's columns hold (ids and times: 64-bit; sequence numbers: 32-bit), so
// that an out-of-range number is a 400 naming the field rather than a failed statement.
const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Time = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Seq = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const DeviceReport = Type.Object({
  serial: Type.String({ minLength: 1, maxLength: 200 }),
  displayName: Type.String({ minLength: 1, maxLength: 200 }),
  manufacturer: Type.String({ maxLength: 200 }),
  osType: Type.Enum(DEVICE_OS_TYPES),
  platform: Type.String({ maxLength: 100 }),
  releaseVersion: Type.String({ maxLength: 50 }),
  apiLevel: Nullable(Type.Integer({ minimum: 0, maximum: 1000 })),
  executionKinds: Type.Array(Type.Enum(EXECUTION_KINDS), { maxItems: 20 }),
  /** Phone or tablet, when the host can tell; the server guesses from the name otherwise (docs/api.md#device-selection). */
  formFactor: Type.Optional(Type.Enum(FORM_FACTORS)),
});
export type DeviceReport = Static<typeof DeviceReport>;

export const HelloRequest = Type.Object({
  protocol: Type.Integer(),
  agentVersion: Type.String({ maxLength: 50 }),
  hostname: Type.String({ maxLength: 255 }),
  devices: Type.Array(DeviceReport, { maxItems: 1000 }),
});
export type HelloRequest = Static<typeof HelloRequest>;

export const HelloResponse = Type.Object({
  agentId: Id,
  devices: Type.Array(Type.Object({ serial: Type.String(), deviceId: Id })),
  heartbeatMs: Type.Integer(),
  leaseMs: Type.Integer(),
  claimWaitMs: Type.Integer(),
  /** How thoroughly to clean between device runs: LIGHT on the public cloud (docs/api.md#deployment-flavours). */
  cleaning: Type.Optional(Type.Enum(CLEANING_KINDS)),
  /** How long the agent may keep a run's inputs after their last use (domain/retention.ts, per flavour). */
  inputRetentionMs: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The cloud's flavour: an agent set up for a laxer one must not run a public cloud's code. */
  flavour: Type.Optional(Type.Enum(FLAVOURS)),
});
export type HelloResponse = Static<typeof HelloResponse>;

/** Devices that appeared on the host after hello (a phone plugged in): registered without a restart. */
export const DevicesRequest = Type.Object({ devices: Type.Array(DeviceReport, { maxItems: 1000 }) });
export type DevicesRequest = Static<typeof DevicesRequest>;
export const DevicesResponse = Type.Object({
  devices: Type.Array(Type.Object({ serial: Type.String(), deviceId: Id })),
});
export type DevicesResponse = Static<typeof DevicesResponse>;

export const HeartbeatRequest = Type.Object({
  /** Device runs the agent is executing right now. */
  running: Type.Array(Id, { maxItems: 1000 }),
  /** Devices whose health check failed since the last heartbeat (taken offline until healthy). */
  unhealthy: Type.Array(Type.Object({ deviceId: Id, reason: Type.String({ maxLength: 1000 }) }), { maxItems: 1000 }),
});
export type HeartbeatRequest = Static<typeof HeartbeatRequest>;

/** Device runs the agent must stop (aborted by their user, or no longer its own). */
export const StopList = Type.Object({
  abort: Type.Array(Id),
  /** Devices an operator returned to service: an agent that gave up on one cleans it again. */
  clean: Type.Optional(Type.Array(Id)),
});
export type StopList = Static<typeof StopList>;

export const ClaimRequest = Type.Object({
  /** Devices that are free and clean. */
  deviceIds: Type.Array(Id, { maxItems: 1000 }),
  running: Type.Array(Id, { maxItems: 1000 }),
  /** How long the server may hold the request open without work. */
  waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
});
export type ClaimRequest = Static<typeof ClaimRequest>;

export const AssignedFile = Type.Object({
  id: Id,
  name: Type.String(),
  action: Type.Enum(FILE_ACTIONS),
  size: Type.Integer(),
  sha256: Type.String(),
  properties: Type.Record(Type.String(), Type.String()),
  /** Path (under the protocol prefix) to download it from. */
  url: Type.String(),
});
export type AssignedFile = Static<typeof AssignedFile>;

export const Assignment = Type.Object({
  deviceRunId: Id,
  deviceId: Id,
  kind: Type.Enum(EXECUTION_KINDS),
  timeoutSeconds: Type.Integer(),
  locale: Type.String(),
  launchApp: Type.Boolean(),
  parameters: Type.Record(Type.String(), Type.String()),
  credentials: Nullable(Type.Object({ username: Type.String(), password: Type.String() })),
  /** Private and enterprise clouds only; the driver applies them and cleaning reverts them. */
  deviceSettings: Nullable(
    Type.Object({
      locale: Nullable(Type.String()),
      wifi: Nullable(Type.Boolean()),
      googleAccount: Nullable(Type.Object({ email: Type.String(), password: Type.String() })),
    }),
  ),
  files: Type.Array(AssignedFile),
  /**
   * Record the device's screen for the whole device session (docs/api.md#videos). Optional so
   * that agents and servers of the previous release still understand each other: absent, nothing
   * is recorded.
   */
  video: Type.Optional(Type.Boolean()),
});
export type Assignment = Static<typeof Assignment>;

export const ClaimResponse = Type.Object({
  assignments: Type.Array(Assignment),
  /** Device runs the agent says it runs that the server has ended: stop them. */
  abort: Type.Array(Id),
  /** Devices the agent calls free that the server still has busy with a device run the agent never received: clean them. */
  clean: Type.Array(Id),
});
export type ClaimResponse = Static<typeof ClaimResponse>;

export const StepReport = Type.Object({
  type: Type.Enum(AGENT_STEP_TYPES),
  time: Time,
  failReason: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
});

export const SampleReport = Type.Object({
  timestamp: Time,
  cpuUsage: Type.Number({ minimum: 0, maximum: 1 }),
  memUsage: Nullable(Type.Number({ minimum: 0 })),
  packageName: Nullable(Type.String({ maxLength: 255 })),
});

export const ProgressReport = Type.Object({
  seq: Seq,
  steps: Type.Array(StepReport, { maxItems: 100 }),
  samples: Type.Array(SampleReport, { maxItems: 10_000 }),
});
export type ProgressReport = Static<typeof ProgressReport>;

/**
 * Largest result and progress message. The agent fits its test cases into it (stack traces,
 * then messages, then names shortened, with a marker: domain/test-cases.ts fitTestCasesInto).
 */
export const REPORT_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

// Names, messages, stack traces and the number of cases are what tests wrote: not bounded here
// (beyond the message size) but cut by the server with the agent's rule (domain/test-cases.ts
// TEST_CASE_LIMITS), so that an over-long one costs its end, never the whole result.
export const TestCaseReport = Type.Object({
  suiteName: Nullable(Type.String()),
  className: Type.String(),
  methodName: Type.String(),
  duration: Type.Number({ minimum: 0 }),
  result: Type.Union([Type.Literal('PASSED'), Type.Literal('FAILED'), Type.Literal('SKIPPED')]),
  errorMessage: Nullable(Type.String()),
  stacktrace: Nullable(Type.String()),
});

export const ResultReport = Type.Object({
  seq: Seq,
  outcome: Type.Enum(DEVICE_RUN_OUTCOMES),
  /** Cut to FAIL_REASON_CHARS by the server: it may quote the customer's output. */
  failReason: Nullable(Type.String()),
  testCases: Type.Array(TestCaseReport),
  // The last steps and samples travel with the result rather than in a progress report of their
  // own, which would be one more round trip between a device run's end and its result.
  steps: Type.Optional(Type.Array(StepReport, { maxItems: 100 })),
  samples: Type.Optional(Type.Array(SampleReport, { maxItems: 10_000 })),
  // Not the device's doing: it cannot do what the run asked (its settings, its account; a WARNING),
  // or the customer's package or its output made the run fail (it cannot be unpacked, broke its
  // sandbox's limits; a FAILED). Neither counted against the device (nor for it: the streak of
  // infrastructure failures stays as it was) nor retried automatically. Absent: the device run
  // says what it says (a WARNING is an infrastructure failure, counted).
  refused: Type.Optional(Type.Boolean()),
});
export type ResultReport = Static<typeof ResultReport>;

export interface ResultResponse {
  /** The device run's state now. */
  readonly state: DeviceRunState;
  /**
   * The device failed too many device runs in a row for reasons outside the tests: the agent
   * checks its health and cleans it FULL before it takes work again (or reports it failed, and it
   * stays out of service). Absent from older servers.
   */
  readonly checkDevice?: boolean;
}

export const ArtifactQuery = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  kind: Type.Union([
    Type.Literal('junit'),
    Type.Literal('log'),
    Type.Literal('screenshot'),
    Type.Literal('output'),
    Type.Literal('video'),
  ]),
});
export type ArtifactQuery = Static<typeof ArtifactQuery>;

export const CleanedReport = Type.Object({ ok: Type.Boolean(), report: Type.String({ maxLength: 10_000 }) });
export type CleanedReport = Static<typeof CleanedReport>;

/**
 * Appium client side (docs/api.md#appium-client-side): the agent holding a session's device
 * long-polls its WebDriver commands and answers each; the server never dials the host.
 */
export const WebDriverPoll = Type.Object({ waitMs: Type.Integer({ minimum: 0, maximum: 60_000 }) });
export type WebDriverPoll = Static<typeof WebDriverPoll>;

export const WebDriverCommandMessage = Type.Object({
  id: Id,
  method: Type.String(),
  /** The path as the client sent it below /wd/hub, e.g. `/session/{id}/element`; `/session` for newSession. */
  path: Type.String(),
  /** JSON text ('' when the request had none). */
  body: Type.String(),
});
export type WebDriverCommandMessage = Static<typeof WebDriverCommandMessage>;

export const WebDriverPollResponse = Type.Object({
  commands: Type.Array(WebDriverCommandMessage),
  /** The session is over (deleted by its client, or its device run ended): stop and report. */
  ended: Type.Boolean(),
});
export type WebDriverPollResponse = Static<typeof WebDriverPollResponse>;

export const WebDriverAnswerReport = Type.Object({
  commandId: Id,
  status: Type.Integer({ minimum: 100, maximum: 599 }),
  /** JSON text, relayed to the client unchanged. */
  body: Type.String({ maxLength: 64 * 1024 * 1024 }),
  /**
   * The next poll, in the same request: the answer's response then carries the session's next
   * commands as a poll's would (one round trip per command instead of two).
   */
  waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
});
export type WebDriverAnswerReport = Static<typeof WebDriverAnswerReport>;

/** `ok`: the answer was the command's first; with `waitMs`, the poll's `commands` and `ended` too. */
export type WebDriverAnswerResponse = { ok: boolean } & Partial<WebDriverPollResponse>;
/**
 * The WebDriver relay's WebSocket (docs/drivers.md#the-webdriver-socket): one per agent, opened
 * by the agent at WEBDRIVER_SOCKET_PATH with its bearer token, while it serves Appium client side
 * sessions. Every frame is one JSON text message. The agent asks for a session's commands
 * (`serve`) and answers them (`answer`, acknowledged by `answered`); the server sends them as they
 * come (`commands`, the same as a poll's response). Anything the socket cannot do, the HTTP routes
 * above still do: the agent falls back to them when the socket will not open or breaks.
 */
export const WEBDRIVER_SOCKET_PATH = `${PROTOCOL_PREFIX}/webdriver/socket`;

export const WebDriverSocketServe = Type.Object({ type: Type.Literal('serve'), deviceRunId: Id });
export const WebDriverSocketAnswer = Type.Object({
  type: Type.Literal('answer'),
  deviceRunId: Id,
  commandId: Id,
  status: Type.Integer({ minimum: 100, maximum: 599 }),
  body: Type.String({ maxLength: 64 * 1024 * 1024 }),
});
/** What the agent sends on the socket. */
export const WebDriverSocketAgentFrame = Type.Union([WebDriverSocketServe, WebDriverSocketAnswer]);
export type WebDriverSocketAgentFrame = Static<typeof WebDriverSocketAgentFrame>;

/** What the server sends: a session's commands (or its end); an answer's receipt; a session it will not serve here. */
export type WebDriverSocketServerFrame =
  | ({ type: 'commands'; deviceRunId: number } & WebDriverPollResponse)
  | { type: 'answered'; commandId: number; ok: boolean }
  | { type: 'refused'; deviceRunId: number; commandId?: number; message: string };

/** Interactive sessions (docs/api.md#interactive-sessions): lines of the device's log, as read. */
export const LogLinesReport = Type.Object({
  lines: Type.Array(Type.String({ maxLength: 8000 }), { maxItems: 2000 }),
});
export type LogLinesReport = Static<typeof LogLinesReport>;
