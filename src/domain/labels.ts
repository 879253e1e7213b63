/**
 * Labels: what the device picker and device groups select devices by (docs/api.md#device-selection).
 * A label is a value in a label group ("Android version" → "14"); a device carries the labels
 * derived from what its host reports, so an upgraded device changes labels and the groups that
 * select by them follow.
 */
import type { DeviceOsType } from './devices.ts';
import type { ListSpec } from './list-query.ts';

export const FORM_FACTORS = ['PHONE', 'TABLET'] as const;
export type FormFactor = (typeof FORM_FACTORS)[number];

export interface LabelGroup {
  readonly id: number;
  /** Stable machine name, e.g. `android-version`. */
  readonly name: string;
  readonly displayName: string;
  /** A picker shows these collapsed: they rarely matter when choosing devices. */
  readonly hiddenByDefault: boolean;
  /** The OS whose devices carry this group's labels; null for every OS. */
  readonly osType: DeviceOsType | null;
}

/**
 * The fixed label groups. Their ids are part of the API (clients keep label ids and group ids), so
 * migration 016 writes these same rows; a new group needs a migration of its own.
 */
export const LABEL_GROUPS: readonly LabelGroup[] = [
  { id: 1, name: 'android-version', displayName: 'Android version', hiddenByDefault: false, osType: 'ANDROID' },
  { id: 2, name: 'ios-version', displayName: 'iOS version', hiddenByDefault: false, osType: 'IOS' },
  { id: 3, name: 'api-level', displayName: 'API level', hiddenByDefault: true, osType: 'ANDROID' },
  { id: 4, name: 'manufacturer', displayName: 'Manufacturer', hiddenByDefault: false, osType: null },
  { id: 5, name: 'form-factor', displayName: 'Form factor', hiddenByDefault: false, osType: null },
  { id: 6, name: 'platform', displayName: 'Platform', hiddenByDefault: false, osType: null },
];

export type LabelGroupName =
  'android-version' | 'ios-version' | 'api-level' | 'manufacturer' | 'form-factor' | 'platform';

export function labelGroupByName(name: LabelGroupName): LabelGroup {
  return LABEL_GROUPS.find((group) => group.name === name)!;
}

export function labelGroupById(id: number): LabelGroup | undefined {
  return LABEL_GROUPS.find((group) => group.id === id);
}

export interface Label {
  readonly id: number;
  readonly groupId: number;
  /** The value as the label's key within its group: lower case, e.g. `14`, `samsung`, `tablet`. */
  readonly name: string;
  readonly displayName: string;
}

/** A label on the device picker: the OS of the devices carrying it, when they share one. */
export interface LabelInUse extends Label {
  readonly osType: DeviceOsType | 'UNDEFINED';
}

/** A label a device should carry, before it has an id. */
export interface LabelValue {
  readonly group: LabelGroupName;
  readonly name: string;
  readonly displayName: string;
}

/** What a device's labels are derived from: what its host reports. */
export interface DeviceFacts {
  readonly displayName: string;
  readonly manufacturer: string;
  readonly osType: DeviceOsType;
  readonly platform: string;
  readonly releaseVersion: string;
  readonly apiLevel: number | null;
  /** Reported by hosts that know it; otherwise guessed from the name (formFactorOf). */
  readonly formFactor?: FormFactor | undefined;
}

const PLATFORM_NAMES: Readonly<Record<string, string>> = { ANDROID: 'Android', IOS: 'iOS' };

/** The labels a device carries: its OS's major version, API level, manufacturer, form factor and platform. */
export function labelsOf(device: DeviceFacts): LabelValue[] {
  const labels: LabelValue[] = [];
  const add = (group: LabelGroupName, displayName: string) => {
    const shown = displayName.trim();
    if (shown !== '') labels.push({ group, name: shown.toLowerCase(), displayName: shown });
  };
  const major = /^\s*(\d+)/.exec(device.releaseVersion)?.[1];
  if (major !== undefined) add(device.osType === 'IOS' ? 'ios-version' : 'android-version', String(Number(major)));
  if (device.osType === 'ANDROID' && device.apiLevel !== null) add('api-level', String(device.apiLevel));
  if (device.manufacturer.trim().toLowerCase() !== 'unknown') add('manufacturer', device.manufacturer);
  add('form-factor', device.formFactor === 'TABLET' || formFactorOf(device) === 'TABLET' ? 'Tablet' : 'Phone');
  add('platform', PLATFORM_NAMES[device.platform] ?? device.platform);
  return labels;
}

/**
 * A device's form factor when its host does not say: iPads and devices named as tablets ("Galaxy
 * Tab S9", "Lenovo Tab M10", "Pixel Tablet") are tablets, the rest phones.
 */
export function formFactorOf(device: Pick<DeviceFacts, 'displayName' | 'formFactor'>): FormFactor {
  if (device.formFactor !== undefined) return device.formFactor;
  return /\b(ipad|tab|tablet)\b/i.test(device.displayName) ? 'TABLET' : 'PHONE';
}

/**
 * Whether a device carrying `deviceLabels` matches a group's selectors: for every label group the
 * selectors name, the device carries one of the selected labels of that group (values of one group
 * are alternatives, groups narrow each other). No selectors match nothing. The store answers the
 * same in SQL (store/labels.ts); this is the rule it implements.
 */
export function matchesSelectors(deviceLabels: ReadonlySet<number>, selectors: readonly Label[]): boolean {
  if (selectors.length === 0) return false;
  const byGroup = new Map<number, Label[]>();
  for (const label of selectors) byGroup.set(label.groupId, [...(byGroup.get(label.groupId) ?? []), label]);
  return [...byGroup.values()].every((labels) => labels.some((label) => deviceLabels.has(label.id)));
}

/** How a device is in a group (the established API's `deviceGroupOrigin`). */
export type DeviceGroupOrigin = 'STATIC' | 'DYNAMIC' | 'HYBRID';

export function groupOrigin(added: boolean, selected: boolean): DeviceGroupOrigin | null {
  if (added && selected) return 'HYBRID';
  if (added) return 'STATIC';
  return selected ? 'DYNAMIC' : null;
}

export const LABEL_LIST: ListSpec<
  'id' | 'name' | 'displayName' | 'propertyGroupId' | 'propertyGroupName' | 'labelGroupName'
> = {
  entity: 'labels',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    displayName: { type: 'string' },
    propertyGroupId: { type: 'number' },
    propertyGroupName: { type: 'string' },
    labelGroupName: { type: 'string' },
  },
  defaultSort: [
    { field: 'propertyGroupId', direction: 'asc' },
    { field: 'displayName', direction: 'asc' },
  ],
};

export const LABEL_GROUP_LIST: ListSpec<'id' | 'name' | 'displayName' | 'hiddenByDefault' | 'labelsSortAscending'> = {
  entity: 'label groups',
  fields: {
    id: { type: 'number' },
    name: { type: 'string' },
    displayName: { type: 'string' },
    hiddenByDefault: { type: 'boolean' },
    labelsSortAscending: { type: 'boolean' },
  },
  defaultSort: [{ field: 'id', direction: 'asc' }],
};
