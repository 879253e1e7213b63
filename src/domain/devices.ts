/** Devices and device groups. The OS version of a device is fixed by the service (seed §1). */
import type { ExecutionKind } from './frameworks-kinds.ts';
import type { ListSpec } from './list-query.ts';

export const DEVICE_OS_TYPES = ['ANDROID', 'IOS'] as const;
export type DeviceOsType = (typeof DEVICE_OS_TYPES)[number];

/** IDLE → TESTING → CLEANING → IDLE; a failed cleaning ends in NOT_OPERATIONAL. */
export const DEVICE_STATES = ['IDLE', 'TESTING', 'CLEANING', 'NOT_OPERATIONAL'] as const;
export type DeviceState = (typeof DEVICE_STATES)[number];

export interface Device {
  readonly id: number;
  readonly displayName: string;
  readonly manufacturer: string;
  readonly osType: DeviceOsType;
  readonly platform: string;
  readonly releaseVersion: string;
  readonly apiLevel: number | null;
  readonly creditsPrice: number;
  readonly enabled: boolean;
  readonly online: boolean;
  readonly state: DeviceState;
  /** Identity on its host (adb serial, UDID, virtual name); null for devices entered by hand. */
  readonly serial: string | null;
  readonly agentId: number | null;
  /** What the device's driver can run; a run of another kind is EXCLUDED for it. */
  readonly executionKinds: readonly ExecutionKind[];
  /** Why it is NOT_OPERATIONAL, when it is. */
  readonly stateReason: string | null;
}

/** A device is locked when it cannot take a run right now; the reason is its state. */
export function lockReason(device: Pick<Device, 'state'>): Exclude<DeviceState, 'IDLE'> | null {
  return device.state === 'IDLE' ? null : device.state;
}

export interface DeviceGroup {
  readonly id: number;
  /** null for the service's public groups. */
  readonly userId: number | null;
  readonly displayName: string;
  readonly osType: DeviceOsType;
  readonly shared: boolean;
  readonly deviceCount: number;
}

export function isPublicGroup(group: Pick<DeviceGroup, 'userId'>): boolean {
  return group.userId === null;
}

export const DEVICE_LIST: ListSpec<'id' | 'displayName' | 'manufacturer' | 'osType' | 'platform' | 'releaseVersion' | 'apiLevel' | 'online' | 'enabled' | 'state'> = {
  entity: 'devices',
  fields: {
    id: { type: 'number' },
    displayName: { type: 'string' },
    manufacturer: { type: 'string' },
    osType: { type: 'enum', values: DEVICE_OS_TYPES },
    platform: { type: 'string' },
    releaseVersion: { type: 'string' },
    apiLevel: { type: 'number' },
    online: { type: 'boolean' },
    enabled: { type: 'boolean' },
    state: { type: 'enum', values: DEVICE_STATES },
  },
  defaultSort: [{ field: 'displayName', direction: 'asc' }],
};

export const DEVICE_GROUP_LIST: ListSpec<'id' | 'displayName' | 'osType' | 'createTime'> = {
  entity: 'device groups',
  fields: {
    id: { type: 'number' },
    displayName: { type: 'string' },
    osType: { type: 'enum', values: DEVICE_OS_TYPES },
    createTime: { type: 'date' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};
