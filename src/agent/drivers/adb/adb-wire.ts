/**
 * Reading the ADB server protocol off a socket we do not trust: exact byte counts with a cap on
 * what may wait unread and a deadline on each read, so a client that sends garbage, claims a huge
 * length or trickles a byte a minute costs a few kilobytes and is closed in time.
 */
import type { Socket } from 'node:net';

/** Why a read gave up; the connection is closed by then. */
export class WireError extends Error {}

export class WireReader {
  private buffered: Buffer = Buffer.alloc(0);
  private waiter: (() => void) | null = null;
  private ended = false;
  private readonly onData = (chunk: Buffer) => {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    if (this.buffered.length > this.limit) this.socket.destroy();
    this.wake();
  };

  constructor(
    private readonly socket: Socket,
    /** Bytes that may wait unread; more closes the connection (nothing legitimate sends that much ahead). */
    private readonly limit: number,
  ) {
    socket.on('data', this.onData);
    const end = () => {
      this.ended = true;
      this.wake();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', end);
  }

  /** Exactly `count` bytes within `timeoutMs` (0: no deadline); a WireError otherwise. */
  async read(count: number, timeoutMs: number): Promise<Buffer> {
    let timer: NodeJS.Timeout | undefined;
    let late = false;
    if (timeoutMs > 0 && this.buffered.length < count) {
      timer = setTimeout(() => {
        late = true;
        this.socket.destroy();
        this.wake();
      }, timeoutMs);
    }
    try {
      while (this.buffered.length < count) {
        if (late) throw new WireError('too slow');
        if (this.ended || this.socket.destroyed) throw new WireError('connection closed');
        await new Promise<void>((resolve) => (this.waiter = resolve));
      }
    } finally {
      clearTimeout(timer);
    }
    const out = this.buffered.subarray(0, count);
    this.buffered = this.buffered.subarray(count);
    return out;
  }

  /** A length-prefixed string (four hex digits, then that many bytes), as requests and host answers are. */
  async string(timeoutMs: number): Promise<string> {
    const head = (await this.read(4, timeoutMs)).toString('latin1');
    if (!/^[0-9a-fA-F]{4}$/.test(head)) {
      this.socket.destroy();
      throw new WireError(`bad length prefix ${JSON.stringify(head)}`);
    }
    return (await this.read(Number.parseInt(head, 16), timeoutMs)).toString('utf8');
  }

  /** Stops reading for good and hands back what was read ahead, for whoever takes the socket over. */
  detach(): Buffer {
    this.socket.pause();
    this.socket.off('data', this.onData);
    const rest = this.buffered;
    this.buffered = Buffer.alloc(0);
    return rest;
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

/** A length-prefixed value, as requests and host answers carry them. */
export function hexString(text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from(body.length.toString(16).padStart(4, '0'), 'ascii'), body]);
}

export const OKAY = Buffer.from('OKAY');

export function failure(message: string): Buffer {
  return Buffer.concat([Buffer.from('FAIL'), hexString(message.slice(0, 4000))]);
}
