/**
 * A fake ADB server on 127.0.0.1 that speaks the real wire protocol to adbkit (and to anything
 * else that speaks it: a test script with bash's /dev/tcp, the adb command line): four-hex-digit
 * length-prefixed requests answered OKAY or FAIL; host services (`host:version`, `host:devices`,
 * `host:devices-l`, `host:track-devices`, `host:kill`, `host[-serial:<serial>]:features` (none, as
 * an old adbd reports: adb then uses `shell:` and the first sync protocol),
 * `host-serial:<serial>:get-state|get-serialno|get-devpath|wait-for-…`, forwards (forwards.ts), `host:transport:<serial>`,
 * `host:transport-any` and `host:tport:serial:<serial>|any`); and, on a transport, host requests
 * again, `shell:` and `exec:` (raw output, as adbd gives it to a command without a terminal), `sync:`
 * (STAT, LIST, SEND/DATA/DONE, RECV, QUIT), `reboot:` and sockets on the phone (`tcp:<port>`,
 * `localabstract:<name>`, … from FakeDevice.tcpServices, as forwards and adbkit's openTcp reach them). Phones can be plugged, unplugged,
 * taken offline or left unauthorized while clients watch. adbkit 3.3 uses no `shell,v2:` (nor
 * `exec:`): every command, install included (`sync:` SEND, then `shell:pm install`), goes through
 * the services above, so the fake answers those and refuses the rest as the server would.
 */
import net from 'node:net';
import { type AdbState, FakeDevice, type FakeDeviceOptions } from './device.ts';
import { FakeForwards } from './forwards.ts';
import { runShell } from './shell.ts';
import { serveSync } from './sync.ts';
import { OKAY, SocketReader, fail, hexValue } from './wire.ts';

export class FakeAdbServer {
  /** Phones plugged in, whether or not adb can talk to them. */
  readonly devices = new Map<string, FakeDevice>();
  /** Every host request received, in order (e.g. `host:track-devices`). */
  readonly requests: string[] = [];
  private readonly trackers = new Set<net.Socket>();
  private readonly deviceSockets = new Map<string, Set<net.Socket>>();
  private readonly sockets = new Set<net.Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  readonly forwards = new FakeForwards();
  /** Whether a client stopped the server (`host:kill`), as `adb kill-server` does. */
  killed = false;

  private constructor(private readonly server: net.Server) {}

  static async start(devices: readonly FakeDeviceOptions[] = []): Promise<FakeAdbServer> {
    const server = net.createServer();
    const fake = new FakeAdbServer(server);
    for (const options of devices) fake.devices.set(options.serial, new FakeDevice(options));
    server.on('connection', (socket) => fake.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  device(serial: string): FakeDevice {
    const device = this.devices.get(serial);
    if (device === undefined) throw new Error(`no fake device ${serial}`);
    return device;
  }

  plug(options: FakeDeviceOptions): FakeDevice {
    const device = new FakeDevice(options);
    this.devices.set(device.serial, device);
    this.changed();
    return device;
  }

  /** Pulls the cable: the phone disappears and every connection to it drops. */
  unplug(serial: string): void {
    this.devices.delete(serial);
    this.forwards.drop(serial);
    this.drop(serial);
    this.changed();
  }

  setState(serial: string, state: AdbState): void {
    this.device(serial).state = state;
    if (state !== 'device') this.drop(serial);
    this.changed();
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    for (const socket of this.sockets) socket.destroy();
    this.forwards.killAll();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      action();
    }, ms);
    this.timers.add(timer);
  }

  private list(long: boolean): string {
    return [...this.devices.values()]
      .map((device) =>
        long
          ? `${device.serial.padEnd(22)} ${device.state} usb:1-1.${device.serial.length % 4} product:${device.props.get('ro.product.name')} model:${device.props.get('ro.product.model')?.replaceAll(' ', '_')} device:${device.props.get('ro.product.device')} transport_id:${device.serial.length}`
          : `${device.serial}\t${device.state}`,
      )
      .map((line) => `${line}\n`)
      .join('');
  }

  private changed(): void {
    const update = hexValue(this.list(false));
    for (const tracker of this.trackers) tracker.write(update);
  }

  private drop(serial: string): void {
    for (const socket of this.deviceSockets.get(serial) ?? []) socket.destroy();
    this.deviceSockets.delete(serial);
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.trackers.delete(socket);
    });
    socket.on('error', () => undefined);
    void this.converse(socket, new SocketReader(socket));
  }

  private async converse(socket: net.Socket, reader: SocketReader): Promise<void> {
    let device: FakeDevice | null = null;
    for (;;) {
      const request = await reader.request();
      if (request === null) return;
      this.requests.push(request);
      if (device === null || request.startsWith('host')) {
        const bound = await this.host(socket, request, device);
        if (bound === 'done') return;
        if (bound === 'continue') continue;
        device = bound;
        const set = this.deviceSockets.get(device.serial) ?? new Set();
        set.add(socket);
        this.deviceSockets.set(device.serial, set);
        continue;
      }
      // `exec:` is `shell:` without a terminal, which the fake's shell never has anyway.
      if (request.startsWith('shell:') || request.startsWith('exec:'))
        return this.shell(socket, device, request.slice(request.indexOf(':') + 1));
      if (request === 'sync:') {
        socket.write(OKAY);
        return serveSync(socket, reader, device);
      }
      // A socket on the phone (what a forward's connections reach; adbkit's openTcp asks for it directly).
      if (/^(tcp|localabstract|localreserved|localfilesystem):/.test(request)) {
        const service = device.tcpServices.get(request);
        if (service === undefined) return void socket.end(fail('closed'));
        reader.release();
        socket.write(OKAY);
        return service(socket);
      }
      if (request === 'reboot:' || request.startsWith('reboot:')) {
        socket.write(OKAY);
        socket.end();
        return this.reboot(device);
      }
      socket.end(fail(`unknown service ${request}`));
      return;
    }
  }

  /** A host request: answered and done, or a transport now bound to a phone. */
  private async host(
    socket: net.Socket,
    request: string,
    bound: FakeDevice | null,
  ): Promise<'done' | 'continue' | FakeDevice> {
    const serviceOf = (prefix: RegExp) => prefix.exec(request)?.slice(1) ?? null;
    const serial = serviceOf(
      /^host-serial:(.+?):(features|get-state|get-serialno|get-devpath|wait-for-[a-z-]+|forward:.*|killforward:.*|killforward-all|list-forward)$/,
    );
    const any = serviceOf(/^host:(features|forward:.*|killforward:.*|killforward-all|list-forward)$/);
    const [target, service] =
      serial !== null
        ? [this.devices.get(serial[0]!) ?? null, serial[1]!]
        : any !== null
          ? [bound ?? this.only(), any[0]!]
          : [null, null];
    if (service !== null) {
      if (service === 'list-forward') socket.end(Buffer.concat([OKAY, hexValue(this.forwards.list())]));
      else if (service === 'killforward-all') socket.end(this.forwards.killAll());
      else if (service.startsWith('killforward:')) socket.end(this.forwards.kill(service.slice('killforward:'.length)));
      else if (target === null)
        socket.end(fail(serial !== null ? `device '${serial[0]}' not found` : 'more than one device/emulator'));
      else if (service === 'features') socket.end(Buffer.concat([OKAY, hexValue('')]));
      else if (service === 'get-state') socket.end(Buffer.concat([OKAY, hexValue(target.state)]));
      else if (service === 'get-serialno') socket.end(Buffer.concat([OKAY, hexValue(target.serial)]));
      else if (service === 'get-devpath')
        socket.end(Buffer.concat([OKAY, hexValue(`usb:1-1.${target.serial.length % 4}`)]));
      else if (service.startsWith('wait-for-'))
        socket.end(
          target.state === 'device'
            ? Buffer.concat([OKAY, OKAY])
            : fail(`device '${target.serial}' is ${target.state}`),
        );
      else socket.end(await this.forwards.forward(target, service.slice('forward:'.length)));
      return 'done';
    }
    if (request === 'host:kill') {
      socket.end(OKAY);
      this.killed = true;
      await this.close();
      return 'done';
    }
    const tport = /^host:tport:(?:serial:(.+)|any)$/.exec(request);
    if (tport !== null || request === 'host:transport-any') {
      const device = tport?.[1] !== undefined ? (this.devices.get(tport[1]) ?? null) : this.only();
      if (device === null)
        socket.end(fail(tport?.[1] !== undefined ? `device '${tport[1]}' not found` : 'more than one device/emulator'));
      else if (device.state !== 'device') socket.end(fail(`device ${device.state}`));
      else {
        const id = Buffer.alloc(8);
        id.writeBigUInt64LE(BigInt(device.serial.length));
        socket.write(tport === null ? OKAY : Buffer.concat([OKAY, id]));
        return device;
      }
      return 'done';
    }
    if (request === 'host:version') {
      socket.end(Buffer.concat([OKAY, hexValue('0029')]));
      return 'done';
    }
    if (request === 'host:devices' || request === 'host:devices-l') {
      socket.end(Buffer.concat([OKAY, hexValue(this.list(request.endsWith('-l')))]));
      return 'done';
    }
    if (request === 'host:track-devices') {
      socket.write(Buffer.concat([OKAY, hexValue(this.list(false))]));
      this.trackers.add(socket);
      return 'done';
    }
    const state = /^host-serial:(.+):get-state$/.exec(request);
    if (state !== null) {
      const device = this.devices.get(state[1]!);
      socket.end(
        device === undefined ? fail(`device '${state[1]}' not found`) : Buffer.concat([OKAY, hexValue(device.state)]),
      );
      return 'done';
    }
    const transport = /^host:transport:(.+)$/.exec(request);
    if (transport !== null) {
      const device = this.devices.get(transport[1]!);
      if (device === undefined) socket.end(fail(`device '${transport[1]}' not found`));
      else if (device.state === 'unauthorized')
        socket.end(
          fail(
            "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\nTry 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device.",
          ),
        );
      else if (device.state === 'offline') socket.end(fail('device offline'));
      else {
        socket.write(OKAY);
        return device;
      }
      return 'done';
    }
    socket.end(fail(`unknown host service '${request}'`));
    return 'done';
  }

  /** The one phone, when exactly one is plugged in (`-d`/`-e`-less requests for "any" device). */
  private only(): FakeDevice | null {
    return this.devices.size === 1 ? [...this.devices.values()][0]! : null;
  }

  private shell(socket: net.Socket, device: FakeDevice, command: string): void {
    socket.write(OKAY);
    const listeners: Array<() => void> = [];
    let closed = false;
    socket.on('close', () => {
      closed = true;
      for (const listener of listeners.splice(0)) listener();
    });
    runShell(device, command, {
      write: (data) => {
        if (!closed) socket.write(data);
      },
      end: () => {
        if (!closed) socket.end();
      },
      get closed() {
        return closed;
      },
      onClose: (listener) => (closed ? listener() : listeners.push(listener)),
    });
  }

  /** Gone from adb for a moment, back as `device` while still booting, then boot completed. */
  private reboot(device: FakeDevice): void {
    device.rebooted();
    this.later(20, () => {
      this.devices.delete(device.serial);
      this.drop(device.serial);
      this.changed();
      this.later(device.rebootGoneMs, () => {
        this.devices.set(device.serial, device);
        this.changed();
        this.later(device.bootMs, () => {
          device.props.set('sys.boot_completed', '1');
          device.logLine(1204, 'I', 'ActivityManager', 'System now ready');
        });
      });
    });
  }
}
