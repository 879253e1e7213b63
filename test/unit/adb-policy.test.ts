/** What a run's ADB endpoint lets through, request by request (src/agent/drivers/adb/adb-policy.ts). */
import { describe, expect, it } from 'vitest';
import { decide, devicesOf, forwardsOf } from '../../src/agent/drivers/adb/adb-policy.ts';

const OWN = '192.168.1.20:5555';
const OTHER = 'ZY2242CQ7N';

describe("the ADB endpoint's policy", () => {
  it('rewrites every way of naming "a device" to the run\'s own phone', () => {
    for (const request of [
      `host:transport:${OWN}`,
      'host:transport-any',
      'host:transport-usb',
      'host:transport-local',
    ]) {
      expect(decide(request, OWN, false)).toEqual({
        kind: 'transport',
        request: `host:transport:${OWN}`,
        tport: false,
      });
    }
    for (const request of [`host:tport:serial:${OWN}`, 'host:tport:any', 'host:tport:usb', 'host:tport:local']) {
      expect(decide(request, OWN, false)).toEqual({
        kind: 'transport',
        request: `host:tport:serial:${OWN}`,
        tport: true,
      });
    }
    for (const request of [
      'host:features',
      'host-usb:features',
      'host-local:features',
      `host-serial:${OWN}:features`,
    ]) {
      expect(decide(request, OWN, false)).toEqual({ kind: 'pass', request: `host-serial:${OWN}:features` });
    }
    expect(decide('host:wait-for-any-device', OWN, false)).toEqual({
      kind: 'pass',
      request: `host-serial:${OWN}:wait-for-any-device`,
    });
  });

  it('refuses other serials, transport ids and requests about the server itself', () => {
    for (const request of [
      `host:transport:${OTHER}`,
      `host:tport:serial:${OTHER}`,
      `host-serial:${OTHER}:shell:id`,
      `host-serial:${OWN}5:get-state`,
      `host:transport:${OWN.split(':')[0]}`,
    ]) {
      expect(decide(request, OWN, false)).toMatchObject({
        kind: 'refuse',
        message: expect.stringContaining(`this ADB endpoint serves ${OWN} only`),
      });
    }
    for (const request of [
      'host:transport-id:3',
      'host:tport:transport-id:3',
      'host-transport-id:3:features',
      'host:kill',
      'host:kill-server',
      'host:connect:1.2.3.4',
      'host:disconnect:',
      'host:pair:1:2',
      'host:mdns:services',
      'host:reconnect-offline',
      `host-serial:${OWN}:detach`,
      'host:emulator:5554',
      'host:something-new',
    ]) {
      expect(decide(request, OWN, true).kind, request).toBe('refuse');
    }
  });

  it('passes device services only once the phone is chosen, less those that reach the host or strand the phone', () => {
    expect(decide('shell:id', OWN, false).kind).toBe('refuse');
    for (const request of [
      'shell:id',
      'shell,v2,raw:id',
      'exec:cat /x',
      'sync:',
      'framebuffer:',
      'reverse:list-forward',
      'reboot:',
      'localabstract:chrome_devtools_remote',
      'jdwp:1234',
    ]) {
      expect(decide(request, OWN, true)).toEqual({ kind: 'service', request });
    }
    for (const request of [
      'reverse:forward:tcp:8081;tcp:8081',
      'reverse:forward:norebind:tcp:1;localfilesystem:/var/run/usbmuxd',
      'tcpip:5555',
      'reboot:bootloader',
      'reboot:recovery',
    ]) {
      expect(decide(request, OWN, true).kind, request).toBe('refuse');
    }
  });

  it('forwards from a loopback TCP port only, to anything on the phone', () => {
    expect(decide('host:forward:tcp:8200;tcp:6790', OWN, true)).toEqual({
      kind: 'forward',
      local: 'tcp:8200',
      remote: 'tcp:6790',
      norebind: false,
    });
    expect(decide(`host-serial:${OWN}:forward:norebind:tcp:0;localabstract:webview`, OWN, false)).toEqual({
      kind: 'forward',
      local: 'tcp:0',
      remote: 'localabstract:webview',
      norebind: true,
    });
    for (const spec of [
      'localfilesystem:/srv/agent/x;tcp:1',
      'tcp:70000;tcp:1',
      'tcp:1.2.3.4:80;tcp:1',
      'tcp:8200',
      'tcp:8200;',
      'tcp:1;tcp:2;tcp:3',
    ]) {
      expect(decide(`host:forward:${spec}`, OWN, true).kind, spec).toBe('refuse');
    }
    expect(decide('host:killforward:tcp:8200', OWN, true)).toEqual({ kind: 'killforward', local: 'tcp:8200' });
    expect(decide(`host-serial:${OWN}:killforward-all`, OWN, true)).toEqual({ kind: 'killforward-all' });
  });

  it("cuts device and forward lists down to the run's phone", () => {
    expect(devicesOf(`${OTHER}\tdevice\n${OWN}\tunauthorized\n${OWN}5\tdevice\n`, OWN)).toBe(`${OWN}\tunauthorized\n`);
    expect(devicesOf(`${OWN}          device usb:1-1 model:Pixel_7\n${OTHER}   device\n`, OWN)).toBe(
      `${OWN}          device usb:1-1 model:Pixel_7\n`,
    );
    const forwards = forwardsOf(`${OTHER} tcp:8200 tcp:6790\n${OWN} tcp:8201 tcp:6790\n`, OWN);
    expect(forwards.text).toBe(`${OWN} tcp:8201 tcp:6790\n`);
    expect([...forwards.locals]).toEqual([
      ['tcp:8200', OTHER],
      ['tcp:8201', OWN],
    ]);
  });
});
