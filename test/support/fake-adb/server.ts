/**
 * A fake ADB server on 127.0.0.1 that speaks the real wire protocol to adbkit (and to anything
 * else that speaks it, e.g. a test script with bash's /dev/tcp): four-hex-digit length-prefixed
 * requests answered OKAY or FAIL; host services (`host:version`, `host:devices`, `host:devices-l`,
 * `host:track-devices`, `host-serial:<serial>:get-state`, `host:transport:<serial>`); and, on a
 * transport, `shell:` (raw output, as adbd gives it to a command without a terminal), `sync:`
 * (STAT, LIST, SEND/DATA/DONE, RECV, QUIT) and `reboot:`. Phones can be plugged, unplugged,
 * taken offline or left unauthorized while clients watch. adbkit 3.3 uses no `shell,v2:` (nor
 * `exec:`): every command, install included (`sync:` SEND, then `shell:pm install`), goes through
 * the services above, so the fake answers those and refuses the rest as the server would.
 */
import net from 'node:net';
import { type AdbState, FakeDevice, type FakeDeviceOptions } from './device.ts';
import { runShell } from './shell.ts';
import { OKAY, SocketReader, fail, hexValue, syncPacket } from './wire.ts';

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const SYNC_CHUNK = 64 * 1024;

export class FakeAdbServer {
  /** Phones plugged in, whether or not adb can talk to them. */
  readonly devices = new Map<string, FakeDevice>();
  /** Every host request received, in order (e.g. `host:track-devices`). */
  readonly requests: string[] = [];
  private readonly trackers = new Set<net.Socket>();
  private readonly deviceSockets = new Map<string, Set<net.Socket>>();
  private readonly sockets = new Set<net.Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

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
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
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
      if (device === null) {
        const bound = this.host(socket, request);
        if (bound === 'done') return;
        if (bound === 'continue') continue;
        device = bound;
        const set = this.deviceSockets.get(device.serial) ?? new Set();
        set.add(socket);
        this.deviceSockets.set(device.serial, set);
        continue;
      }
      if (request.startsWith('shell:')) return this.shell(socket, device, request.slice('shell:'.length));
      if (request === 'sync:') {
        socket.write(OKAY);
        return this.sync(socket, reader, device);
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
  private host(socket: net.Socket, request: string): 'done' | 'continue' | FakeDevice {
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
      socket.end(device === undefined ? fail(`device '${state[1]}' not found`) : Buffer.concat([OKAY, hexValue(device.state)]));
      return 'done';
    }
    const transport = /^host:transport:(.+)$/.exec(request);
    if (transport !== null) {
      const device = this.devices.get(transport[1]!);
      if (device === undefined) socket.end(fail(`device '${transport[1]}' not found`));
      else if (device.state === 'unauthorized') socket.end(fail("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\nTry 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device."));
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

  private async sync(socket: net.Socket, reader: SocketReader, device: FakeDevice): Promise<void> {
    for (;;) {
      const head = await reader.read(8);
      if (head === null) return;
      const id = head.toString('ascii', 0, 4);
      const length = head.readUInt32LE(4);
      if (id === 'QUIT') {
        socket.end();
        return;
      }
      const argument = (await reader.read(length))?.toString('utf8');
      if (argument === undefined) return;
      device.commands.push(`sync:${id} ${argument}`);
      if (id === 'STAT') {
        const entry = device.files.get(argument);
        const stat = Buffer.alloc(12);
        if (entry !== undefined) {
          stat.writeUInt32LE(entry === null ? S_IFDIR | 0o771 : S_IFREG | 0o644, 0);
          stat.writeUInt32LE(entry?.length ?? 4096, 4);
          stat.writeUInt32LE(Math.floor(Date.now() / 1000), 8);
        }
        socket.write(Buffer.concat([Buffer.from('STAT'), stat]));
      } else if (id === 'LIST') {
        const prefix = `${argument.replace(/\/+$/, '')}/`;
        for (const [file, content] of device.files) {
          if (!file.startsWith(prefix) || file.slice(prefix.length).includes('/')) continue;
          const name = Buffer.from(file.slice(prefix.length));
          const dent = Buffer.alloc(16);
          dent.writeUInt32LE(content === null ? S_IFDIR | 0o771 : S_IFREG | 0o644, 0);
          dent.writeUInt32LE(content?.length ?? 4096, 4);
          dent.writeUInt32LE(Math.floor(Date.now() / 1000), 8);
          dent.writeUInt32LE(name.length, 12);
          socket.write(Buffer.concat([Buffer.from('DENT'), dent, name]));
        }
        socket.write(Buffer.concat([Buffer.from('DONE'), Buffer.alloc(16)]));
      } else if (id === 'SEND') {
        const target = argument.slice(0, argument.lastIndexOf(','));
        const chunks: Buffer[] = [];
        for (;;) {
          const packet = await reader.read(8);
          if (packet === null) return;
          const kind = packet.toString('ascii', 0, 4);
          const size = packet.readUInt32LE(4);
          if (kind === 'DONE') break;
          if (kind !== 'DATA') {
            socket.end(syncPacket('FAIL', 0));
            return;
          }
          const data = await reader.read(size);
          if (data === null) return;
          chunks.push(data);
        }
        device.writeFile(target, Buffer.concat(chunks));
        socket.write(syncPacket('OKAY', 0));
      } else if (id === 'RECV') {
        const content = device.files.get(argument);
        if (content === undefined || content === null) {
          const message = Buffer.from(`open failed: ${content === null ? 'Is a directory' : 'No such file or directory'}`);
          socket.write(syncPacket('FAIL', message.length, message));
          continue;
        }
        for (let at = 0; at < content.length; at += SYNC_CHUNK) {
          const part = content.subarray(at, at + SYNC_CHUNK);
          socket.write(syncPacket('DATA', part.length, part));
        }
        socket.write(syncPacket('DONE', 0));
      } else {
        const message = Buffer.from(`unknown sync command ${id}`);
        socket.end(syncPacket('FAIL', message.length, message));
        return;
      }
    }
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
