/**
 * Follows phones coming and going through the ADB server's `host:track-devices`, which pushes the
 * whole list on every change. The connection is reopened when it drops (the ADB server was
 * restarted, or was not running yet), so the agent keeps up without polling.
 */
import { EventEmitter } from 'node:events';
import type { AdbClient as Client } from './adbkit.ts';

/** adbkit's tracker; `deviceList` (private in its types) is the list as of its last update. */
type Tracker = Awaited<ReturnType<Client['trackDevices']>> & { readonly deviceList: readonly Device[] };

/** adb's own words: device, offline, unauthorized, authorizing, connecting, recovery, no permissions, ... */
export type AdbState = string;

const RETRY_MS = [250, 1000, 2000, 5000];

export class DeviceTracker extends EventEmitter<{ change: [serial: string, state: AdbState | null] }> {
  private readonly states = new Map<string, AdbState>();
  private tracker: Tracker | null = null;
  private closed = false;
  private failures = 0;
  private retry: NodeJS.Timeout | null = null;
  private firstList!: () => void;
  /** Resolves once the first list arrived (or the first attempt failed). */
  readonly ready = new Promise<void>((resolve) => (this.firstList = resolve));
  /** Why the ADB server could not be reached, while it cannot. */
  problem: string | null = null;

  constructor(
    private readonly client: Client,
    private readonly log: (message: string) => void,
  ) {
    super();
    this.connect();
  }

  state(serial: string): AdbState | null {
    return this.states.get(serial) ?? null;
  }

  serials(): string[] {
    return [...this.states.keys()].sort();
  }

  close(): void {
    this.closed = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.tracker?.end();
  }

  private connect(): void {
    Promise.resolve(this.client.trackDevices()).then(
      (tracker) => {
        if (this.closed) return void tracker.end();
        this.tracker = tracker;
        const heard = () => {
          this.failures = 0;
          this.problem = null;
          this.firstList();
        };
        tracker.on('changeSet', (changes: { added: Device[]; changed: Device[]; removed: Device[] }) => {
          for (const device of [...changes.added, ...changes.changed]) this.set(device.id, device.type);
          for (const device of changes.removed) this.set(device.id, null);
          heard();
        });
        // adbkit's tracker starts reading in its constructor, so the first list may have been
        // read before this listener was attached: take the list it holds now.
        if (tracker.deviceList.length > 0) {
          for (const device of tracker.deviceList) this.set(device.id, device.type);
          heard();
        }
        tracker.on('error', (error: Error) => tracker === this.tracker && this.lost(error));
        tracker.on(
          'end',
          () => tracker === this.tracker && this.lost(new Error('the ADB server closed the connection')),
        );
      },
      (error: Error) => this.lost(error),
    );
  }

  private lost(error: Error): void {
    if (this.closed || this.retry !== null) return;
    this.tracker = null;
    this.problem = `the ADB server cannot be reached (${error.message})`;
    if (this.failures === 0) this.log(`${this.problem}; retrying`);
    // Without the server nobody knows the phones' state: none is offered until it answers again.
    for (const serial of [...this.states.keys()]) this.set(serial, null);
    this.firstList();
    const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]!;
    this.failures += 1;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect();
    }, delay);
  }

  private set(serial: string, state: AdbState | null): void {
    if ((this.states.get(serial) ?? null) === state) return;
    if (state === null) this.states.delete(serial);
    else this.states.set(serial, state);
    this.emit('change', serial, state);
  }
}

interface Device {
  readonly id: string;
  readonly type: AdbState;
}
