/**
 * A run's forwards when its script has no network (the public flavour's sandbox): a listener on
 * the host's loopback would be out of its reach, and a way into the host's network it must not
 * have. Instead the run's endpoint asks the relay inside the sandbox (sandbox-relay.mjs, the
 * script's parent) to listen on the sandbox's own 127.0.0.1:<port>; its connections come back
 * through the endpoint's socket as device services of the run's phone. Nothing is listening on
 * the host, and the host's ADB server never holds these forwards: they end with the sandbox.
 */
import fs from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { OKAY, failure, hexString } from './adb-wire.ts';

/** adb's own default port: tools that assume it find the run's endpoint there, inside the sandbox. */
export const RELAY_ADB_PORT = 5037;
const MAX_LINE = 64 * 1024;

/** The relay's file, shown read-only inside the sandbox with the agent's Node binary. */
export const RELAY_SCRIPT = fileURLToPath(new URL('./sandbox-relay.mjs', import.meta.url));

/** What a script's command is wrapped in: the relay runs it as its child. */
export function relayLauncher(
  adbSocket: string,
  controlSocket: string,
  node = process.execPath,
): { command: string[]; readOnly: string[]; controlSocket: string } {
  // Small and on few threads: it counts toward the sandbox's memory and processes.
  const flags = ['--max-old-space-size=32', '--v8-pool-size=1'];
  return {
    command: [node, ...flags, RELAY_SCRIPT, adbSocket, controlSocket, String(RELAY_ADB_PORT), '--'],
    readOnly: [node, RELAY_SCRIPT],
    controlSocket,
  };
}

interface Reply {
  readonly id: number;
  readonly port?: number;
  readonly error?: string;
}

export class RelayForwards {
  private readonly server: net.Server;
  private control: net.Socket | null = null;
  private readonly waiting = new Map<number, (reply: Reply) => void>();
  /** local spec (`tcp:<port>`) → remote spec. */
  private readonly forwards = new Map<string, string>();
  private nextId = 1;

  private constructor(
    readonly socketPath: string,
    private readonly timeoutMs: number,
  ) {
    this.server = net.createServer((socket) => this.accept(socket));
    this.server.maxConnections = 2;
  }

  static async open(socketPath: string, timeoutMs: number): Promise<RelayForwards> {
    const relay = new RelayForwards(socketPath, timeoutMs);
    fs.rmSync(socketPath, { force: true });
    await new Promise<void>((resolve, reject) =>
      relay.server.once('error', reject).listen(socketPath, () => resolve()),
    );
    fs.chmodSync(socketPath, 0o600);
    return relay;
  }

  /** The answer to `forward:[norebind:]<local>;<remote>` (after the server's first OKAY). */
  async forward(local: string, remote: string, norebind: boolean): Promise<Buffer> {
    if (norebind && this.forwards.has(local)) return Buffer.concat([OKAY, failure('cannot rebind existing socket')]);
    const reply = await this.ask({ listen: Number(local.slice('tcp:'.length)), remote });
    if (reply.error !== undefined || reply.port === undefined)
      return Buffer.concat([OKAY, failure(`cannot bind listener: ${reply.error ?? 'no port'}`)]);
    this.forwards.set(`tcp:${reply.port}`, remote);
    return Buffer.concat([OKAY, OKAY, hexString(String(reply.port))]);
  }

  async kill(local: string): Promise<Buffer> {
    if (!this.forwards.has(local)) return Buffer.concat([OKAY, failure(`listener '${local}' not found`)]);
    this.forwards.delete(local);
    await this.ask({ close: Number(local.slice('tcp:'.length)) });
    return Buffer.concat([OKAY, OKAY]);
  }

  async killAll(): Promise<Buffer> {
    for (const local of [...this.forwards.keys()]) await this.kill(local);
    return Buffer.concat([OKAY, OKAY]);
  }

  /** `serial local remote` lines, as the server lists forwards. */
  list(serial: string): string {
    return [...this.forwards].map(([local, remote]) => `${serial} ${local} ${remote}\n`).join('');
  }

  close(): void {
    this.server.close();
    this.control?.destroy();
    for (const waiter of this.waiting.values()) waiter({ id: 0, error: 'the run ended' });
    this.waiting.clear();
    this.forwards.clear();
    try {
      fs.rmSync(this.socketPath, { force: true });
    } catch {
      // The script owns the folder and may have put something else there; the run's cleanup takes it.
    }
  }

  /** The relay connects before the script starts: the first connection is it, and the only one heard. */
  private accept(socket: net.Socket): void {
    socket.on('error', () => undefined);
    if (this.control !== null) {
      socket.destroy();
      return;
    }
    this.control = socket;
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      if (pending.length > MAX_LINE) socket.destroy();
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        try {
          const reply = JSON.parse(line) as Reply;
          this.waiting.get(reply.id)?.(reply);
          this.waiting.delete(reply.id);
        } catch {
          // not a reply
        }
      }
    });
    socket.on('close', () => {
      for (const waiter of this.waiting.values()) waiter({ id: 0, error: "the run's relay is gone" });
      this.waiting.clear();
    });
  }

  private ask(message: Record<string, unknown>): Promise<Reply> {
    const control = this.control;
    if (control === null || control.destroyed)
      return Promise.resolve({ id: 0, error: "the run's relay is not running" });
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ id, error: "the run's relay did not answer" });
      }, this.timeoutMs);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      control.write(`${JSON.stringify({ id, ...message })}\n`);
    });
  }
}
