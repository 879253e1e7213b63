/** Reading the ADB wire formats off a socket: exact byte counts, as the protocol is length-prefixed throughout. */
import type { Socket } from 'node:net';

export class SocketReader {
  private buffered = Buffer.alloc(0);
  private waiter: (() => void) | null = null;
  private closed = false;

  private readonly onData = (chunk: Buffer) => {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    this.wake();
  };

  constructor(private readonly socket: Socket) {
    socket.on('data', this.onData);
    const close = () => {
      this.closed = true;
      this.wake();
    };
    socket.on('end', close);
    socket.on('close', close);
    socket.on('error', close);
  }

  /** Exactly `count` bytes, or null when the peer went away first. */
  async read(count: number): Promise<Buffer | null> {
    while (this.buffered.length < count) {
      if (this.closed) return null;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
    const out = this.buffered.subarray(0, count);
    this.buffered = this.buffered.subarray(count);
    return out;
  }

  /** Stops reading and puts back what was read ahead, for whoever takes the raw socket over. */
  release(): void {
    this.socket.off('data', this.onData);
    if (this.buffered.length > 0) this.socket.unshift(this.buffered);
    this.buffered = Buffer.alloc(0);
  }

  /** A smart-socket request: four hex digits of length, then the text. */
  async request(): Promise<string | null> {
    const length = await this.read(4);
    if (length === null) return null;
    const body = await this.read(Number.parseInt(length.toString('ascii'), 16));
    return body === null ? null : body.toString('utf8');
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

/** A length-prefixed value, as host services answer. */
export function hexValue(text: string | Buffer): Buffer {
  const body = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from(body.length.toString(16).padStart(4, '0'), 'ascii'), body]);
}

export function fail(message: string): Buffer {
  return Buffer.concat([Buffer.from('FAIL'), hexValue(message)]);
}

export const OKAY = Buffer.from('OKAY');

/** A sync-protocol packet: four-letter id and a little-endian 32-bit number. */
export function syncPacket(id: string, value: number, body?: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'ascii');
  head.writeUInt32LE(value, 4);
  return body === undefined ? head : Buffer.concat([head, body]);
}
