/** Devices and device groups. A device's OS version is fixed by the service (docs/api.md#devices-and-device-groups). */
import type { ExecutionKind } from './frameworks-kinds.ts';
import type { FieldSpec, ListSpec } from './list-query.ts';
import { stateMachine } from './state-machine.ts';

export const DEVICE_OS_TYPES = ['ANDROID', 'IOS'] as const;
export type DeviceOsType = (typeof DEVICE_OS_TYPES)[number];

/** IDLE → TESTING → CLEANING → IDLE; a failed cleaning ends in NOT_OPERATIONAL. */
export const DEVICE_STATES = ['IDLE', 'TESTING', 'CLEANING', 'NOT_OPERATIONAL'] as const;
export type DeviceState = (typeof DEVICE_STATES)[number];

export type DeviceEvent =
  'register' | 'claim' | 'unclaim' | 'runEnded' | 'stranded' | 'cleaned' | 'takeOut' | 'returnToService';

/**
 * How a device's state changes, and nothing else changes it. Entered by hand it starts IDLE; an
 * agent's new device starts CLEANING. Out of service (NOT_OPERATIONAL) it stays until an operator
 * returns it.
 */
export const DEVICE_MACHINE = stateMachine<DeviceState, DeviceEvent>({
  name: 'device',
  states: DEVICE_STATES,
  initial: ['IDLE', 'CLEANING'],
  events: {
    /** Its agent (re)registered it (hello, or it appeared): it is cleaned before it takes work. */
    register: { from: ['IDLE', 'TESTING', 'CLEANING'], to: ['CLEANING'] },
    /** A claim took it for a device run; a device never runs two at once. */
    claim: { from: ['IDLE'], to: ['TESTING'] },
    /** The claim that took it found no device run for it after all. */
    unclaim: { from: ['TESTING'], to: ['IDLE'] },
    /**
     * Its agent reported a device run's end. IDLE and CLEANING too: a late result of an aborted
     * device run whose device was already released (`stranded`) has it cleaned once more.
     */
    runEnded: { from: ['IDLE', 'TESTING', 'CLEANING'], to: ['CLEANING'] },
    /** Its device run ended (lease ran out, aborted) before its agent received it. */
    stranded: { from: ['TESTING'], to: ['CLEANING'] },
    /**
     * Its agent cleaned it. TESTING too: a device run given up on (its lease ran out) leaves its
     * device TESTING, and its agent cleans the device once the run's result is refused.
     */
    cleaned: { from: ['IDLE', 'TESTING', 'CLEANING'], to: ['IDLE'] },
    /** Its cleaning or health check failed, or it failed device runs in a row again after a check. */
    takeOut: { from: ['IDLE', 'TESTING', 'CLEANING'], to: ['NOT_OPERATIONAL'] },
    /** An operator returned it: it is cleaned again before it takes work. */
    returnToService: { from: ['NOT_OPERATIONAL'], to: ['CLEANING'] },
  },
});

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
export function lockReason(device: Pick<Device, 'state'>): (typeof LOCK_REASONS)[number] | null {
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
  /** The owner's e-mail (null for public groups). */
  readonly ownerEmail: string | null;
}

export function isPublicGroup(group: Pick<DeviceGroup, 'userId'>): boolean {
  return group.userId === null;
}

/** Why a device cannot take a run right now: its state, when that is not IDLE (lockReason). */
export const LOCK_REASONS = ['TESTING', 'CLEANING', 'NOT_OPERATIONAL'] as const;

/**
 * The established service's device fields that have no meaning here and are always null (a device
 * serves every account; it has no picture frame and lists no browsers), with their types: the
 * device list still filters and sorts on them, as the service's does.
 */
export const DEVICE_CONSTANT_FIELDS = {
  deviceGroupOrigin: { type: 'string' },
  accountId: { type: 'number' },
  accountName: { type: 'string' },
  mainUserEmail: { type: 'string' },
  location: { type: 'string' },
  imagePrefix: { type: 'string' },
  imageTop: { type: 'number' },
  imageLeft: { type: 'number' },
  imageWidth: { type: 'number' },
  imageHeight: { type: 'number' },
  imageCornerRadius: { type: 'number' },
  frameExtraWidth: { type: 'number' },
  frame80Url: { type: 'string' },
  frame100Url: { type: 'string' },
  frame160Url: { type: 'string' },
  frame400Url: { type: 'string' },
  supportedCreators: { type: 'string' },
} as const satisfies Record<string, FieldSpec>;
export type DeviceConstantField = keyof typeof DEVICE_CONSTANT_FIELDS;

export const DEVICE_LIST: ListSpec<
  | 'id'
  | 'displayName'
  | 'manufacturer'
  | 'osType'
  | 'platform'
  | 'releaseVersion'
  | 'apiLevel'
  | 'online'
  | 'enabled'
  | 'state'
  | 'creditsPrice'
  | 'stateReason'
  | 'locked'
  | 'lockReason'
  | 'available'
  | DeviceConstantField
> = {
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
    creditsPrice: { type: 'number' },
    stateReason: { type: 'string' },
    locked: { type: 'boolean' },
    lockReason: { type: 'enum', values: LOCK_REASONS },
    available: { type: 'boolean' },
    ...DEVICE_CONSTANT_FIELDS,
  },
  defaultSort: [{ field: 'displayName', direction: 'asc' }],
};

export const DEVICE_GROUP_LIST: ListSpec<
  | 'id'
  | 'displayName'
  | 'osType'
  | 'createTime'
  | 'name'
  | 'userId'
  | 'deviceCount'
  | 'userEmail'
  | 'shared'
  | 'isPublic'
  | 'creditsPrice'
> = {
  entity: 'device groups',
  fields: {
    id: { type: 'number' },
    displayName: { type: 'string' },
    osType: { type: 'enum', values: DEVICE_OS_TYPES },
    createTime: { type: 'date' },
    name: { type: 'string' },
    userId: { type: 'number' },
    deviceCount: { type: 'number' },
    userEmail: { type: 'string' },
    // Seen from the caller: a group another user shared with them is shared (docs/api.md#sharing).
    shared: { type: 'boolean' },
    isPublic: { type: 'boolean' },
    creditsPrice: { type: 'number' },
  },
  defaultSort: [{ field: 'createTime', direction: 'desc' }],
};

/**
 * What the end of a device run does to its device's streak of infrastructure failures: a WARNING
 * counts one; what was not the device's doing (it refused a setting, or the customer's package
 * or output failed the run: `refused`) leaves the streak as it was; any other end shows the device
 * worked, and ends the streak.
 */
export function streakEffect(outcome: string, refused: boolean): 'count' | 'keep' | 'reset' {
  if (refused) return 'keep';
  return outcome === 'WARNING' ? 'count' : 'reset';
}

/**
 * After an infrastructure failure, with `streak` of them in a row: the device is cleaned as after
 * any run; at the limit it is checked once (health, then a FULL cleaning) before it takes work
 * again, a failed check taking it out of service; beyond the limit, failing again after that
 * check, it is out of service until an operator returns it.
 */
export function afterInfraFailure(streak: number, maxInfraFailures: number): 'CLEAN' | 'CHECK' | 'OUT' {
  if (streak < maxInfraFailures) return 'CLEAN';
  return streak === maxInfraFailures ? 'CHECK' : 'OUT';
}
