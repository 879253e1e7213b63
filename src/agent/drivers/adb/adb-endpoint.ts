/**
 * One run's own ADB server, as far as its script can tell: a unix socket in the run folder (adb
 * clients take `ADB_SERVER_SOCKET=localfilesystem:<path>`) and, optionally, a TCP port on the
 * loopback for tools that insist on one (Appium's adb always passes `-P <port>`). Behind it is the
 * host's real ADB server, which reaches every phone on the host; in front of it, only the run's
 * phone exists: the device list holds it alone, any other serial is refused, "any device" means
 * it, and requests that would touch the server itself or other phones (kill, connect, pairing,
 * other devices' forwards, reverse forwards to the host) are refused (adb-policy.ts). Forwards
 * are TCP ports on the host's loopback, never over another device's; they are removed when the
 * endpoint closes with the run. For a script without network (`relay`), forwards are made inside
 * its sandbox by its relay instead (relay-forwards.ts), and the host's server holds none. Hostile
 * clients are bounded (adb-wire.ts): a request must arrive whole within `requestTimeoutMs`, at
 * most 64 KiB may wait unread, connections are capped. The endpoint is the only way to the phones
 * only where the sandbox has no network (the public flavour); with the host's network a script
 * can dial the host's ADB server itself (docs/security.md, "One device, one run").
 */
import fs from 'node:fs';
import net from 'node:net';
import { type Decision, decide, devicesOf, forwardsOf } from './adb-policy.ts';
import { OKAY, WireError, WireReader, failure, hexString } from './adb-wire.ts';
import { RelayForwards } from './relay-forwards.ts';
import type { AdbServerAddress } from './server-side.ts';

export interface AdbEndpointOptions {
  /** The run's phone: the only device this endpoint knows. */
  readonly serial: string;
  /** The host's ADB server. */
  readonly upstream: AdbServerAddress;
  /** Where the unix socket is made (in the run folder; under 108 bytes, as unix sockets need). */
  readonly socketPath: string;
  /** Also listen on 127.0.0.1 (an ephemeral port) for clients that only speak TCP. */
  readonly tcp?: boolean;
  /** The control socket of the run's relay (sandbox-relay.mjs), for a script without network: forwards are made inside its sandbox. */
  readonly relayControlPath?: string;
  /** How long a client may take to send a whole request, and the server to answer one (default 30 s). */
  readonly requestTimeoutMs?: number;
  /** Client connections at once (default 32). */
  readonly maxConnections?: number;
  readonly log?: (message: string) => void;
}

export interface AdbEndpoint {
  readonly socketPath: string;
  readonly tcpPort: number | null;
  /** The variables a script's adb (and adbkit, Appium) find the endpoint by. */
  env(): Record<string, string>;
  /** Stops listening, drops every connection, removes the socket file and the phone's forwards. */
  close(): Promise<void>;
}

const UNREAD_LIMIT = 64 * 1024 + 8;
const REFUSALS_LOGGED = 10;
/** The kernel's limit on a unix socket's path (sun_path), less its terminating NUL. */
const SOCKET_PATH_MAX = 107;

export async function openAdbEndpoint(options: AdbEndpointOptions): Promise<AdbEndpoint> {
  for (const socket of [options.socketPath, options.relayControlPath]) {
    if (socket !== undefined && Buffer.byteLength(socket) > SOCKET_PATH_MAX) {
      throw new Error(
        `the run folder's path is too long for the ADB endpoint's socket (${socket}): use a shorter --data-dir`,
      );
    }
  }
  const endpoint = new Endpoint(options);
  try {
    await endpoint.listen();
  } catch (error) {
    // Half started (the unix socket up, the port or the relay's channel not): nothing may outlive it.
    await endpoint.close();
    throw error;
  }
  return endpoint;
}

class Endpoint implements AdbEndpoint {
  private readonly servers: net.Server[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly timeoutMs: number;
  private readonly log: (message: string) => void;
  private closed = false;
  private refusals = 0;
  private relay: RelayForwards | null = null;
  tcpPort: number | null = null;

  constructor(private readonly options: AdbEndpointOptions) {
    this.timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.log = options.log ?? (() => undefined);
  }

  get socketPath(): string {
    return this.options.socketPath;
  }

  async listen(): Promise<void> {
    fs.rmSync(this.socketPath, { force: true });
    const unix = this.server();
    await new Promise<void>((resolve, reject) => unix.once('error', reject).listen(this.socketPath, () => resolve()));
    // Only the agent's user may connect; the run folder is the run's alone.
    fs.chmodSync(this.socketPath, 0o600);
    if (this.options.tcp) {
      const tcp = this.server();
      await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
      this.tcpPort = (tcp.address() as net.AddressInfo).port;
    }
    if (this.options.relayControlPath !== undefined)
      this.relay = await RelayForwards.open(this.options.relayControlPath, this.timeoutMs);
  }

  env(): Record<string, string> {
    const env: Record<string, string> = { ADB_SERVER_SOCKET: `localfilesystem:${this.socketPath}` };
    if (this.tcpPort !== null)
      Object.assign(env, { ANDROID_ADB_SERVER_ADDRESS: '127.0.0.1', ANDROID_ADB_SERVER_PORT: String(this.tcpPort) });
    return env;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const server of this.servers) server.close();
    for (const socket of this.sockets) socket.destroy();
    this.relay?.close();
    if (this.refusals > REFUSALS_LOGGED)
      this.log(
        `${this.options.serial}: ${this.refusals - REFUSALS_LOGGED} more request(s) from the run's script refused`,
      );
    try {
      fs.rmSync(this.socketPath, { force: true });
    } catch (error) {
      // The script owns the folder and may have put something else there; the run's cleanup takes it.
      this.log(`${this.options.serial}: could not remove ${this.socketPath}: ${(error as Error).message}`);
    }
    if (this.relay !== null) return;
    try {
      for (const local of (await this.forwards()).own)
        await this.answer(`host-serial:${this.options.serial}:killforward:${local}`);
    } catch (error) {
      this.log(`${this.options.serial}: could not remove the run's forwards: ${(error as Error).message}`);
    }
  }

  /** Logged a few at a time: a script refused in a loop must not flood the agent's log. */
  private refused(request: string, message: string): void {
    this.refusals += 1;
    if (this.refusals <= REFUSALS_LOGGED)
      this.log(`${this.options.serial}: refused '${request.slice(0, 120)}' from the run's script: ${message}`);
  }

  private server(): net.Server {
    const server = net.createServer((client) => this.accept(client));
    server.maxConnections = this.options.maxConnections ?? 32;
    server.on('error', (error) => this.log(`ADB endpoint of ${this.options.serial}: ${error.message}`));
    this.servers.push(server);
    return server;
  }

  private track(socket: net.Socket): net.Socket {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    return socket;
  }

  private accept(client: net.Socket): void {
    if (this.closed) {
      client.destroy();
      return;
    }
    this.track(client);
    void this.converse(client).catch((error: unknown) => {
      if (!(error instanceof WireError))
        this.log(`ADB endpoint of ${this.options.serial}: ${(error as Error).message}`);
      // An answer already on its way (the server's absence, say) is let through.
      if (!client.writableEnded) client.destroy();
    });
  }

  private connectUpstream(): net.Socket {
    const socket = this.track(net.connect({ host: this.options.upstream.host, port: this.options.upstream.port }));
    socket.setNoDelay(true);
    return socket;
  }

  /** One client connection: requests until it binds to the phone and starts a device service, or is answered. */
  private async converse(client: net.Socket): Promise<void> {
    const reader = new WireReader(client, UNREAD_LIMIT);
    let upstream: { socket: net.Socket; reader: WireReader } | null = null;
    const server = () => {
      if (upstream === null) {
        const socket = this.connectUpstream();
        upstream = { socket, reader: new WireReader(socket, UNREAD_LIMIT) };
        socket.once('error', (error) => {
          if (socket.bytesRead === 0) client.end(failure(`the host's ADB server does not answer: ${error.message}`));
        });
        socket.on('close', () => client.end());
        client.on('close', () => socket.destroy());
      }
      return upstream;
    };
    let bound = false;
    for (;;) {
      const request = await reader.string(this.timeoutMs);
      const decision: Decision =
        request === '' ? { kind: 'refuse', message: 'empty request' } : decide(request, this.options.serial, bound);
      switch (decision.kind) {
        case 'refuse':
          this.refused(request, decision.message);
          client.end(failure(decision.message));
          return;
        case 'pass':
          return this.splice(client, reader, server(), decision.request, false);
        case 'service':
          return this.splice(client, reader, server(), decision.request, true);
        case 'transport': {
          const { socket, reader: answers } = server();
          socket.write(hexString(decision.request));
          if (!(await this.status(client, answers))) return;
          client.write(decision.tport ? Buffer.concat([OKAY, await answers.read(8, this.timeoutMs)]) : OKAY);
          bound = true;
          continue;
        }
        case 'devices':
          return this.devices(client, server(), decision.request, decision.track);
        case 'list-forward':
          if (this.relay !== null)
            return void client.end(Buffer.concat([OKAY, hexString(this.relay.list(this.options.serial))]));
          client.end(
            Buffer.concat([
              OKAY,
              hexString(forwardsOf(await this.answer('host:list-forward'), this.options.serial).text),
            ]),
          );
          return;
        case 'forward':
        case 'killforward':
        case 'killforward-all':
          return this.forwarding(client, reader, server, decision);
      }
    }
  }

  /** Hands a request to the server and the rest of the conversation to the two sockets (`both`: the client may keep talking). */
  private splice(
    client: net.Socket,
    reader: WireReader,
    upstream: { socket: net.Socket; reader: WireReader },
    request: string,
    both: boolean,
  ): void {
    upstream.socket.write(hexString(request));
    const ahead = upstream.reader.detach();
    if (ahead.length > 0) client.write(ahead);
    upstream.socket.pipe(client);
    if (!both) return;
    const early = reader.detach();
    if (early.length > 0) upstream.socket.write(early);
    client.pipe(upstream.socket);
  }

  /** Relays the server's OKAY, or its FAIL and message (true when OKAY). */
  private async status(client: net.Socket, answers: WireReader): Promise<boolean> {
    const status = (await answers.read(4, this.timeoutMs)).toString('latin1');
    if (status === 'OKAY') return true;
    const message =
      status === 'FAIL'
        ? await answers.string(this.timeoutMs)
        : `unexpected answer from the ADB server: ${JSON.stringify(status)}`;
    client.end(failure(message));
    return false;
  }

  /** The device list (once, or as it changes) with the run's phone alone in it. */
  private async devices(
    client: net.Socket,
    upstream: { socket: net.Socket; reader: WireReader },
    request: string,
    track: boolean,
  ): Promise<void> {
    upstream.socket.write(hexString(request));
    if (!(await this.status(client, upstream.reader))) return;
    client.write(OKAY);
    let last: string | null = null;
    do {
      const list = devicesOf(await upstream.reader.string(track ? 0 : this.timeoutMs), this.options.serial);
      // Other phones coming and going are none of the run's business: only its own changes are told.
      if (list !== last) client.write(hexString(list));
      last = list;
    } while (track);
    client.end();
  }

  private async forwarding(
    client: net.Socket,
    reader: WireReader,
    server: () => { socket: net.Socket; reader: WireReader },
    decision: Extract<Decision, { kind: 'forward' | 'killforward' | 'killforward-all' }>,
  ): Promise<void> {
    const { serial } = this.options;
    if (this.relay !== null) {
      const { relay } = this;
      if (decision.kind === 'forward')
        client.end(await relay.forward(decision.local, decision.remote, decision.norebind));
      else client.end(decision.kind === 'killforward' ? await relay.kill(decision.local) : await relay.killAll());
      return;
    }
    const { own, others } = await this.forwards();
    if (decision.kind === 'killforward-all') {
      // The server's own killforward-all drops every device's forwards: each of the phone's goes alone.
      for (const local of own) await this.answer(`host-serial:${serial}:killforward:${local}`);
      client.end(Buffer.concat([OKAY, OKAY]));
      return;
    }
    if (decision.kind === 'killforward') {
      if (!own.includes(decision.local)) {
        client.end(Buffer.concat([OKAY, failure(`listener '${decision.local}' not found`)]));
        return;
      }
      return this.splice(client, reader, server(), `host-serial:${serial}:killforward:${decision.local}`, false);
    }
    if (others.includes(decision.local)) {
      client.end(
        Buffer.concat([
          OKAY,
          failure(`cannot rebind existing socket: ${decision.local} is forwarded to another device`),
        ]),
      );
      return;
    }
    // A port not yet the phone's is taken with norebind: should another run grab it meanwhile, this fails instead of moving theirs.
    const norebind = decision.norebind || !own.includes(decision.local) ? 'norebind:' : '';
    return this.splice(
      client,
      reader,
      server(),
      `host-serial:${serial}:forward:${norebind}${decision.local};${decision.remote}`,
      false,
    );
  }

  /** The host's forwards: the local ends held by the run's phone, and those held by any other. */
  private async forwards(): Promise<{ own: string[]; others: string[] }> {
    const { locals } = forwardsOf(await this.answer('host:list-forward'), this.options.serial);
    const own: string[] = [];
    const others: string[] = [];
    for (const [local, owner] of locals) (owner === this.options.serial ? own : others).push(local);
    return { own, others };
  }

  /** A host request of the endpoint's own, on a connection of its own: the answer's text ('' when none). */
  private async answer(request: string): Promise<string> {
    const socket = this.connectUpstream();
    const answers = new WireReader(socket, UNREAD_LIMIT);
    try {
      socket.write(hexString(request));
      const status = (await answers.read(4, this.timeoutMs)).toString('latin1');
      if (status === 'FAIL') throw new Error(await answers.string(this.timeoutMs));
      if (status !== 'OKAY') throw new Error(`unexpected answer ${JSON.stringify(status)}`);
      if (request.endsWith('list-forward')) return await answers.string(this.timeoutMs);
      return '';
    } finally {
      socket.destroy();
    }
  }
}
