import { type Device, type DeviceGroup, isPublicGroup, lockReason } from '../../domain/devices.ts';
import Type from 'typebox';
import { AlwaysNull, Bool, Count, Id, MaybeInt, MaybeStr, SelfURI, Str } from './fields.ts';
import { Nested, Nullable, type Rep, entity, entitySchema } from './representation.ts';
import type { PresentContext } from './context.ts';
import { sharingOf } from './sharing.ts';
import type { DeviceGroupOrigin, Label } from '../../domain/labels.ts';
import { ApiDevicePropertyList, presentDeviceProperties } from './label.ts';

/** A stable number for an OS release ("17.4.1" → 170401), since versions have no table of their own. */
function softwareVersionId(releaseVersion: string): number {
  const [major = 0, minor = 0, patch = 0] = releaseVersion.split('.').map((part) => Number.parseInt(part, 10) || 0);
  return major * 10000 + minor * 100 + patch;
}

export const ApiSoftwareVersion = entitySchema('apiSoftwareVersion', {
  id: Type.Integer({ description: 'The release as a number: 17.4.1 is 170401' }),
  releaseVersion: Str,
  apiLevel: MaybeInt,
});

/** The legacy device run's own copy of its device's release, without the number. */
export const ApiSoftwareRelease = entitySchema(
  'apiSoftwareVersion',
  { releaseVersion: Str, apiLevel: MaybeInt },
  { title: 'apiSoftwareRelease' },
);

const deviceFields = {
  id: Id,
  selfURI: SelfURI,
  displayName: Str,
  manufacturer: Str,
  osType: Str,
  platform: Str,
  softwareVersion: Nested(ApiSoftwareVersion),
  online: Bool,
  locked: Bool,
  lockReason: MaybeStr,
  creditsPrice: Type.Number(),
  enabled: Bool,
  deviceGroupOrigin: Nullable(Type.String({ description: 'In a group: STATIC (added), DYNAMIC (selected) or HYBRID' })),
  available: Bool,
  stateReason: MaybeStr,
  accountId: AlwaysNull,
  accountName: AlwaysNull,
  mainUserEmail: AlwaysNull,
  location: AlwaysNull,
  availability: AlwaysNull,
  supportedCreators: AlwaysNull,
  browsers: AlwaysNull,
  properties: Nullable(Nested(ApiDevicePropertyList)),
  imagePrefix: AlwaysNull,
  imageTop: AlwaysNull,
  imageLeft: AlwaysNull,
  imageWidth: AlwaysNull,
  imageHeight: AlwaysNull,
  imageCornerRadius: AlwaysNull,
  frameExtraWidth: AlwaysNull,
  frame80Url: AlwaysNull,
  frame100Url: AlwaysNull,
  frame160Url: AlwaysNull,
  frame400Url: AlwaysNull,
};

export const ApiDevice = entitySchema('apiDevice', deviceFields);

/** What operators see of a device: its public fields, then its host's. */
export const ApiManagedDevice = entitySchema(
  'apiDevice',
  { ...deviceFields, state: Str, serial: MaybeStr, agentId: Nullable(Id) },
  { title: 'apiManagedDevice' },
);

export const ApiDeviceGroup = entitySchema('apiDeviceGroup', {
  id: Id,
  selfURI: SelfURI,
  displayName: Str,
  name: Str,
  osType: Str,
  deviceCount: Count,
  userId: Nullable(Id),
  userEmail: MaybeStr,
  shared: Bool,
  isPublic: Bool,
  creditsPrice: Count,
});

/**
 * What a device record adds where it is asked for (docs/api.md#device-selection): its labels
 * (`withProperties=true`) and, in a group's device list, how it is in the group.
 */
export interface DeviceExtras {
  readonly properties?: readonly Label[] | undefined;
  readonly origin?: DeviceGroupOrigin | undefined;
}

export function presentDevice(device: Device, extras: DeviceExtras = {}): Rep {
  return entity(ApiDevice, deviceFieldsOf(device, extras));
}

function deviceFieldsOf(device: Device, extras: DeviceExtras = {}) {
  const reason = lockReason(device);
  return {
    id: device.id,
    selfURI: `/devices/${device.id}`,
    displayName: device.displayName,
    manufacturer: device.manufacturer,
    osType: device.osType,
    platform: device.platform,
    softwareVersion: entity(ApiSoftwareVersion, {
      id: softwareVersionId(device.releaseVersion),
      releaseVersion: device.releaseVersion,
      apiLevel: device.apiLevel,
    }),
    online: device.online,
    locked: reason !== null || !device.online,
    lockReason: reason,
    creditsPrice: device.creditsPrice,
    enabled: device.enabled,
    deviceGroupOrigin: extras.origin ?? null,
    available: device.enabled && device.online && reason === null,
    stateReason: device.stateReason,
    // Every device serves every account: none is an account's private device, none stands in a
    // named lab or has its model's pool size rated, and none has picture frames or browsers listed.
    accountId: null,
    accountName: null,
    mainUserEmail: null,
    location: null,
    availability: null,
    supportedCreators: null,
    browsers: null,
    properties: extras.properties === undefined ? null : presentDeviceProperties(device.id, extras.properties),
    imagePrefix: null,
    imageTop: null,
    imageLeft: null,
    imageWidth: null,
    imageHeight: null,
    imageCornerRadius: null,
    frameExtraWidth: null,
    frame80Url: null,
    frame100Url: null,
    frame160Url: null,
    frame400Url: null,
  };
}

/** A device as operators see it: its public fields, plus which host holds it and by what serial. */
export function presentManagedDevice(device: Device): Rep {
  return entity(ApiManagedDevice, {
    ...deviceFieldsOf(device),
    selfURI: `/admin/devices/${device.id}`,
    state: device.state,
    serial: device.serial,
    agentId: device.agentId,
  });
}

export function presentDeviceGroup(group: DeviceGroup, context: PresentContext): Rep {
  return entity(ApiDeviceGroup, {
    id: group.id,
    selfURI: isPublicGroup(group) ? `/device-groups/${group.id}` : `/users/${group.userId}/device-groups/${group.id}`,
    displayName: group.displayName,
    name: group.displayName,
    osType: group.osType,
    deviceCount: group.deviceCount,
    userId: group.userId,
    // A group is its owner's (a public group has none), also when it is shared with the caller.
    userEmail: group.ownerEmail,
    shared: sharingOf(group.userId, context, group.shared).shared,
    isPublic: isPublicGroup(group),
    // Nothing is billed here.
    creditsPrice: 0,
  });
}
