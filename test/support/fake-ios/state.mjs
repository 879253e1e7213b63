/**
 * The fake go-ios' device state: one JSON file (FAKE_IOS_STATE) shared by all its processes, so
 * that what one command does (install, uninstall, reboot, a crash in the fake WDA) is what the
 * next one sees. Changes take a lock and replace the file whole; every command line is appended
 * to `<state>.calls.jsonl`, and every request the fake WebDriverAgent answered to `<state>.wda.jsonl`,
 * for the tests to read.
 */
import fs from 'node:fs';

const STATE = process.env.FAKE_IOS_STATE;

export function statePath() {
  if (!STATE) {
    process.stderr.write('fake ios: FAKE_IOS_STATE is not set\n');
    process.exit(2);
  }
  return STATE;
}

export function readState() {
  return JSON.parse(fs.readFileSync(statePath(), 'utf8'));
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Runs `change` on the state under the lock and writes the result. */
export function updateState(change) {
  const lock = `${statePath()}.lock`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A lock older than the deadline belongs to a killed process.
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > 10_000) fs.rmSync(lock, { recursive: true, force: true });
      } catch {}
      if (Date.now() > deadline) throw new Error('fake ios: state lock timeout');
      Atomics.wait(pause, 0, 0, 5);
    }
  }
  try {
    const state = readState();
    const result = change(state);
    const partial = `${statePath()}.${process.pid}.part`;
    fs.writeFileSync(partial, JSON.stringify(state, null, 2));
    fs.renameSync(partial, statePath());
    return result;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** A request the fake WebDriverAgent answered, its session id written `{session}`, for the tests to read. */
export function recordWdaRequest(method, route, body) {
  fs.appendFileSync(
    `${statePath()}.wda.jsonl`,
    `${JSON.stringify({ method, path: route.replace(/^\/session\/[^/]+/, '/session/{session}'), body })}\n`,
  );
}

export function recordCall(args) {
  fs.appendFileSync(
    `${statePath()}.calls.jsonl`,
    `${JSON.stringify({ args, at: Date.now(), tmpdir: process.env.TMPDIR ?? null })}\n`,
  );
}

/**
 * A device answers unless it is rebooting. A real reboot keeps a phone away for tens of seconds,
 * far longer than any poll; the fake's is short, so it also lasts until `list`s have seen the
 * phone gone (`rebootUnseen` of them), however slow the machine running the tests.
 */
export function online(device, now = Date.now()) {
  return (device.offlineUntil ?? 0) <= now && !device.rebootUnseen;
}
