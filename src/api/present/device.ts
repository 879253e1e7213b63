import { type Device, type DeviceGroup, isPublicGroup, lockReason } from '../../domain/devices.ts';
import { type Rep, rep } from './representation.ts';

/** A stable number for an OS release ("17.4.1" → 170401), since versions have no table of their own. */
function softwareVersionId(releaseVersion: string): number {
  const [major = 0, minor = 0, patch = 0] = releaseVersion.split('.').map((part) => Number.parseInt(part, 10) || 0);
  return major * 10000 + minor * 100 + patch;
}

export function presentDevice(device: Device): Rep {
  const reason = lockReason(device);
  return rep('apiDevice', {
    id: device.id,
    selfURI: `/devices/${device.id}`,
    displayName: device.displayName,
    manufacturer: device.manufacturer,
    osType: device.osType,
    platform: device.platform,
    softwareVersion: rep('apiSoftwareVersion', {
      id: softwareVersionId(device.releaseVersion),
      releaseVersion: device.releaseVersion,
      apiLevel: device.apiLevel,
    }),
    online: device.online,
    locked: reason !== null || !device.online,
    lockReason: reason,
    creditsPrice: device.creditsPrice,
    enabled: device.enabled,
    deviceGroupOrigin: null,
    available: device.enabled && device.online && reason === null,
    stateReason: device.stateReason,
  });
}

/** A device as operators see it: its public fields, plus which host holds it and by what serial. */
export function presentManagedDevice(device: Device): Rep {
  return rep('apiDevice', {
    ...presentDevice(device),
    selfURI: `/admin/devices/${device.id}`,
    state: device.state,
    serial: device.serial,
    agentId: device.agentId,
  });
}

export function presentDeviceGroup(group: DeviceGroup): Rep {
  return rep('apiDeviceGroup', {
    id: group.id,
    selfURI: isPublicGroup(group) ? `/device-groups/${group.id}` : `/users/${group.userId}/device-groups/${group.id}`,
    displayName: group.displayName,
    name: group.displayName,
    osType: group.osType,
    deviceCount: group.deviceCount,
    userId: group.userId,
    shared: group.shared,
    isPublic: isPublicGroup(group),
  });
}
