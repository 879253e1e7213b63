/**
 * The fake ADB server's port forwards, as the real one keeps them: one host-wide list of listeners
 * (`serial local remote`), each a real TCP port on 127.0.0.1 whose connections reach a service on
 * the phone (FakeDevice.tcpServices, e.g. Appium's UiAutomator2 server on tcp:6790). Like the real
 * server, `killforward` and `killforward-all` do not look at which device asked: that is why a
 * run's endpoint checks ownership itself.
 */
import net from 'node:net';
import type { FakeDevice } from './device.ts';
import { OKAY, fail, hexValue } from './wire.ts';

interface Listener {
  readonly device: FakeDevice;
  readonly remote: string;
  readonly server: net.Server;
}

export class FakeForwards {
  private readonly listeners = new Map<string, Listener>();

  list(): string {
    return [...this.listeners]
      .map(([local, listener]) => `${listener.device.serial} ${local} ${listener.remote}\n`)
      .join('');
  }

  /** `forward:[norebind:]<local>;<remote>` for `device`: the answer, as the server writes it. */
  async forward(device: FakeDevice, spec: string): Promise<Buffer> {
    const norebind = spec.startsWith('norebind:');
    const [local, remote] = (norebind ? spec.slice('norebind:'.length) : spec).split(';') as [
      string,
      string | undefined,
    ];
    const port = /^tcp:(\d+)$/.exec(local);
    if (port === null || remote === undefined)
      return Buffer.concat([OKAY, fail(`cannot bind listener: unsupported spec '${local}'`)]);
    const existing = this.listeners.get(local);
    if (existing !== undefined) {
      if (norebind) return Buffer.concat([OKAY, fail('cannot rebind existing socket')]);
      this.listeners.set(local, { ...existing, device, remote });
      return Buffer.concat([OKAY, OKAY, hexValue(port[1]!)]);
    }
    const server = net.createServer((socket) =>
      this.connect(`tcp:${(server.address() as net.AddressInfo).port}`, socket),
    );
    try {
      await new Promise<void>((resolve, reject) =>
        server.once('error', reject).listen(Number(port[1]), '127.0.0.1', resolve),
      );
    } catch (error) {
      return Buffer.concat([OKAY, fail(`cannot bind listener: ${(error as Error).message}`)]);
    }
    const bound = `tcp:${(server.address() as net.AddressInfo).port}`;
    this.listeners.set(bound, { device, remote, server });
    return Buffer.concat([OKAY, OKAY, hexValue(bound.slice(4))]);
  }

  kill(local: string): Buffer {
    const listener = this.listeners.get(local);
    if (listener === undefined) return Buffer.concat([OKAY, fail(`listener '${local}' not found`)]);
    this.listeners.delete(local);
    listener.server.close();
    return Buffer.concat([OKAY, OKAY]);
  }

  killAll(): Buffer {
    for (const local of [...this.listeners.keys()]) this.kill(local);
    return Buffer.concat([OKAY, OKAY]);
  }

  /** Drops the forwards of a phone that went away, as the server does. */
  drop(serial: string): void {
    for (const [local, listener] of this.listeners) if (listener.device.serial === serial) this.kill(local);
  }

  private connect(local: string, socket: net.Socket): void {
    socket.on('error', () => undefined);
    const listener = this.listeners.get(local);
    const service = listener?.device.tcpServices.get(listener.remote);
    if (service === undefined) socket.destroy();
    else service(socket);
  }
}
