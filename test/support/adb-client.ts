/**
 * A bare client of the ADB server protocol for tests: it sends exactly the requests it is told
 * (as a hostile script would), to a TCP port or a unix socket, and reads the answers as they come.
 */
import net from 'node:net';
import { WireReader, hexString } from '../../src/agent/drivers/adb/adb-wire.ts';

export type Address = { readonly path: string } | { readonly port: number };

export class AdbWireClient {
  private constructor(
    readonly socket: net.Socket,
    private readonly reader: WireReader,
  ) {}

  static async connect(address: Address): Promise<AdbWireClient> {
    const socket = 'path' in address ? net.connect(address.path) : net.connect(address.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new AdbWireClient(socket, new WireReader(socket, 16 * 1024 * 1024));
  }

  send(request: string): this {
    this.socket.write(hexString(request));
    return this;
  }

  /** `OKAY`, or the server's FAIL message. */
  async status(): Promise<'OKAY' | { fail: string }> {
    const status = (await this.reader.read(4, 10_000)).toString('latin1');
    if (status === 'OKAY') return 'OKAY';
    if (status === 'FAIL') return { fail: await this.reader.string(10_000) };
    throw new Error(`unexpected status ${JSON.stringify(status)}`);
  }

  string(): Promise<string> {
    return this.reader.string(10_000);
  }

  read(count: number): Promise<Buffer> {
    return this.reader.read(count, 10_000);
  }

  /** Everything until the other side closes. */
  async rest(): Promise<string> {
    const chunks: Buffer[] = [];
    for (;;) {
      try {
        chunks.push(await this.reader.read(1, 10_000));
      } catch {
        return Buffer.concat(chunks).toString('utf8');
      }
    }
  }

  /** Resolves when the other side has closed the connection. */
  closed(): Promise<void> {
    return this.socket.closed
      ? Promise.resolve()
      : new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  close(): void {
    this.socket.destroy();
  }

  /** One request on a connection of its own: its status and, when OKAY, the length-prefixed answer. */
  static async ask(address: Address, request: string): Promise<string | { fail: string }> {
    const client = await AdbWireClient.connect(address);
    try {
      const status = await client.send(request).status();
      return status === 'OKAY' ? await client.string() : status;
    } finally {
      client.close();
    }
  }

  /** `host:transport:<serial>` (or any binding request), then a shell command's whole output. */
  static async shell(address: Address, bind: string, command: string): Promise<string | { fail: string }> {
    const client = await AdbWireClient.connect(address);
    try {
      const bound = await client.send(bind).status();
      if (bound !== 'OKAY') return bound;
      if (bind.startsWith('host:tport:')) await client.read(8);
      const started = await client.send(`shell:${command}`).status();
      return started === 'OKAY' ? await client.rest() : started;
    } finally {
      client.close();
    }
  }
}
