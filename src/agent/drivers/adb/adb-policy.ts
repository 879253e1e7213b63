/**
 * What a run's ADB endpoint (adb-endpoint.ts) lets through: each smart-socket request a script's
 * adb client sends is read here and either refused (FAIL with a reason) or rewritten so that it can
 * only ever concern the run's own phone. No I/O: the endpoint carries the decisions out.
 *
 * Shapes of the ADB server protocol (adb's SERVICES.TXT and client sources): host services are
 * `host:<service>` (any device), `host-serial:<serial>:<service>`, `host-usb:` / `host-local:`
 * and `host-transport-id:<id>:`; `host:transport:<serial>`, `host:transport-any|usb|local` and
 * (newer clients) `host:tport:serial:<serial>` / `host:tport:any|usb|local`, answered with 8 more
 * bytes (the transport id), bind the connection to a phone, whose next request is a device service
 * (`shell:`, `sync:`, `exec:`, …) passed through as raw bytes from then on.
 */

export type Decision =
  | { readonly kind: 'refuse'; readonly message: string }
  /** Sent upstream as `request`; the answer is passed back untouched. */
  | { readonly kind: 'pass'; readonly request: string }
  /** `host:devices[-l]` / `host:track-devices[-l]`: the answer is cut down to the run's phone. */
  | { readonly kind: 'devices'; readonly request: string; readonly track: boolean }
  | { readonly kind: 'list-forward' }
  /** Binds the connection to the run's phone; `tport` answers carry an 8-byte transport id. */
  | { readonly kind: 'transport'; readonly request: string; readonly tport: boolean }
  | { readonly kind: 'forward'; readonly local: string; readonly remote: string; readonly norebind: boolean }
  | { readonly kind: 'killforward'; readonly local: string }
  | { readonly kind: 'killforward-all' }
  /** A device service on the bound phone: raw bytes both ways from here on. */
  | { readonly kind: 'service'; readonly request: string };

const REFUSED_HOST: ReadonlyArray<readonly [RegExp, string]> = [
  [/^kill(-server)?$/, 'the ADB server is shared by every phone on this host: a run may not stop it'],
  [/^(connect|disconnect|pair)(:|$)/, 'a run may not connect, disconnect or pair devices'],
  [/^(mdns|reconnect|attach|detach|emulator)(:|-|$)/, 'a run may not change which devices the ADB server manages'],
];

/** Host services about one phone that only read its state (or wait for it). */
const READ_ONLY_SERIAL_SERVICE = /^(get-state|get-serialno|get-devpath|features|wait-for-(any|usb|local)-[a-z]+)$/;

/** Reboot targets that leave the phone outside adb's reach until someone is at the bench. */
const STRANDING_REBOOT = /^reboot:(bootloader|recovery|sideload|sideload-auto-reboot|fastboot|edl)$/;

/** Forwards the endpoint allows: a TCP port on the host's loopback to anything on the phone. */
const FORWARD_LOCAL = /^tcp:(\d{1,5})$/;

/** Decides one request of a connection; `bound` is whether it already chose the run's phone. */
export function decide(request: string, serial: string, bound: boolean): Decision {
  const elsewhere = (other: string): Decision => ({
    kind: 'refuse',
    message: `device '${other}' is not this run's device: this ADB endpoint serves ${serial} only`,
  });
  if (!request.startsWith('host')) return deviceService(request, bound);

  let service: string;
  const colon = request.indexOf(':');
  const prefix = colon < 0 ? request : request.slice(0, colon);
  const rest = colon < 0 ? '' : request.slice(colon + 1);
  if (prefix === 'host' || prefix === 'host-usb' || prefix === 'host-local') service = rest;
  else if (prefix === 'host-serial') {
    if (!rest.startsWith(`${serial}:`)) return elsewhere(serialOf(rest));
    service = rest.slice(serial.length + 1);
  } else if (prefix === 'host-transport-id')
    return { kind: 'refuse', message: `transport ids are not offered here: name the device with -s ${serial}` };
  else return deviceService(request, bound);

  for (const [pattern, message] of REFUSED_HOST) if (pattern.test(service)) return { kind: 'refuse', message };
  if (service === 'version' || service === 'host-features') return { kind: 'pass', request: `host:${service}` };
  if (service === 'devices' || service === 'devices-l')
    return { kind: 'devices', request: `host:${service}`, track: false };
  if (service === 'track-devices' || service === 'track-devices-l')
    return { kind: 'devices', request: `host:${service}`, track: true };

  if (service.startsWith('transport:')) {
    const wanted = service.slice('transport:'.length);
    return wanted === serial
      ? { kind: 'transport', request: `host:transport:${serial}`, tport: false }
      : elsewhere(wanted);
  }
  if (/^transport-(any|usb|local)$/.test(service))
    return { kind: 'transport', request: `host:transport:${serial}`, tport: false };
  if (service.startsWith('tport:serial:')) {
    const wanted = service.slice('tport:serial:'.length);
    return wanted === serial
      ? { kind: 'transport', request: `host:tport:serial:${serial}`, tport: true }
      : elsewhere(wanted);
  }
  if (/^tport:(any|usb|local)$/.test(service))
    return { kind: 'transport', request: `host:tport:serial:${serial}`, tport: true };
  if (service.startsWith('transport-id:') || service.startsWith('tport:'))
    return { kind: 'refuse', message: `transport ids are not offered here: name the device with -s ${serial}` };

  if (READ_ONLY_SERIAL_SERVICE.test(service)) return { kind: 'pass', request: `host-serial:${serial}:${service}` };
  if (service === 'list-forward') return { kind: 'list-forward' };
  if (service === 'killforward-all') return { kind: 'killforward-all' };
  if (service.startsWith('killforward:')) return { kind: 'killforward', local: service.slice('killforward:'.length) };
  if (service.startsWith('forward:')) return forward(service.slice('forward:'.length));
  return { kind: 'refuse', message: `'${clip(service)}' is not offered through this run's ADB endpoint` };
}

function deviceService(request: string, bound: boolean): Decision {
  if (!bound)
    return { kind: 'refuse', message: 'device offline (no transport): choose the device first (host:transport)' };
  if (request.startsWith('reverse:forward:'))
    return {
      kind: 'refuse',
      message: "reverse forwarding is not offered: it would let the phone reach the host's own services",
    };
  if (request.startsWith('tcpip:'))
    return { kind: 'refuse', message: 'adb over TCP/IP is not offered: the phone would leave this host' };
  if (STRANDING_REBOOT.test(request))
    return { kind: 'refuse', message: `${request} is not offered: the phone would leave adb's reach` };
  return { kind: 'service', request };
}

function forward(spec: string): Decision {
  const norebind = spec.startsWith('norebind:');
  const body = norebind ? spec.slice('norebind:'.length) : spec;
  const split = body.indexOf(';');
  const local = split < 0 ? body : body.slice(0, split);
  const remote = split < 0 ? '' : body.slice(split + 1);
  const port = FORWARD_LOCAL.exec(local);
  if (port === null || Number(port[1]) > 65535)
    return {
      kind: 'refuse',
      message: `forwarding from '${clip(local)}' is not offered: only tcp:<port> on the host's loopback`,
    };
  if (remote === '' || remote.includes(';'))
    return { kind: 'refuse', message: `'${clip(remote)}' is not a device socket to forward to` };
  return { kind: 'forward', local, remote, norebind };
}

/** A serial named in `host-serial:<serial>:<service>`, for the message only (serials may hold ':'). */
function serialOf(rest: string): string {
  const at = rest.lastIndexOf(':');
  return clip(at < 0 ? rest : rest.slice(0, at));
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/** Lines of a device list (`serial<TAB|spaces>state …`) about `serial` only. */
export function devicesOf(list: string, serial: string): string {
  return list
    .split('\n')
    .filter((line) => line.split(/[\t ]/, 1)[0] === serial)
    .map((line) => `${line}\n`)
    .join('');
}

/** A forward list (`serial local remote` per line) cut to `serial`'s, and the local specs it holds. */
export function forwardsOf(list: string, serial: string): { text: string; locals: Map<string, string> } {
  const locals = new Map<string, string>();
  const lines: string[] = [];
  for (const line of list.split('\n')) {
    const [owner, local, remote] = line.split(' ');
    if (local === undefined) continue;
    locals.set(local, owner!);
    if (owner === serial) lines.push(`${owner} ${local} ${remote ?? ''}\n`);
  }
  return { text: lines.join(''), locals };
}
