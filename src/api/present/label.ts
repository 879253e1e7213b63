/**
 * Label groups, labels (the established API's device properties) and the device picker's filters
 * (docs/api.md#device-selection).
 */
import Type from 'typebox';
import { type Label, type LabelGroup, type LabelInUse, labelGroupById } from '../../domain/labels.ts';
import { Bool, Id, SelfURI, Str } from './fields.ts';
import { listSchema, presentWholeList } from './list.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

export const ApiLabelGroup = entitySchema('apiLabelGroup', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  displayName: Str,
  hiddenByDefault: Bool,
  labelsSortAscending: Type.Boolean({ description: 'Its labels are listed by name, ascending' }),
});

export const ApiDeviceProperty = entitySchema(
  'apiDeviceProperty',
  {
    id: Id,
    selfURI: SelfURI,
    name: Str,
    displayName: Str,
    propertyGroupId: Id,
    propertyGroupName: Str,
    labelGroupName: Str,
  },
  { description: 'A label: a value in a label group, such as Android version 14' },
);

export const ApiDevicePropertyList = listSchema(ApiDeviceProperty);

export const ApiDeviceFilter = entitySchema('apiDeviceFilter', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  displayName: Str,
  hidden: Bool,
  osType: Str,
});

export const ApiDeviceFilterGroup = entitySchema('apiDeviceFilterGroup', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  deviceFilters: Type.Array(Nested(ApiDeviceFilter)),
});

export const ApiDevicePicker = entitySchema('apiDevicePicker', {
  id: Type.Integer({ minimum: 0 }),
  selfURI: SelfURI,
  deviceFilterGroups: Type.Array(Nested(ApiDeviceFilterGroup)),
});

export function presentLabelGroup(group: LabelGroup): Rep {
  return entity(ApiLabelGroup, {
    id: group.id,
    selfURI: `/label-groups/${group.id}`,
    name: group.name,
    displayName: group.displayName,
    hiddenByDefault: group.hiddenByDefault,
    // Every group's labels are listed by name, ascending (LABEL_LIST), OS versions too.
    labelsSortAscending: true,
  });
}

export function presentLabel(label: Label): Rep {
  const group = labelGroupById(label.groupId);
  return entity(ApiDeviceProperty, {
    id: label.id,
    selfURI: `/label-groups/${label.groupId}/labels/${label.id}`,
    name: label.name,
    displayName: label.displayName,
    propertyGroupId: label.groupId,
    propertyGroupName: group?.displayName ?? '',
    labelGroupName: group?.name ?? '',
  });
}

/** A device's labels as the list its record embeds with `withProperties=true`. */
export function presentDeviceProperties(deviceId: number, labels: readonly Label[]): Rep {
  const selfURI = `/devices/${deviceId}/properties`;
  return presentWholeList(labels.map(presentLabel), { selfURI, url: selfURI });
}

/**
 * The device picker: one filter group per label group, one filter per label some device carries,
 * with the OS of the devices carrying it (UNDEFINED when both OSes do).
 */
export function presentDevicePicker(groups: readonly LabelGroup[], labels: readonly LabelInUse[]): Rep {
  return entity(ApiDevicePicker, {
    id: 0,
    selfURI: '/devices/filters',
    deviceFilterGroups: groups
      .map((group) => ({ group, filters: labels.filter((label) => label.groupId === group.id) }))
      .filter(({ filters }) => filters.length > 0)
      .map(({ group, filters }) =>
        entity(ApiDeviceFilterGroup, {
          id: group.id,
          selfURI: `/label-groups/${group.id}`,
          name: group.displayName,
          deviceFilters: filters.map((label) =>
            entity(ApiDeviceFilter, {
              id: label.id,
              selfURI: `/label-groups/${group.id}/labels/${label.id}`,
              name: label.name,
              displayName: label.displayName,
              hidden: group.hiddenByDefault,
              osType: label.osType,
            }),
          ),
        }),
      ),
  });
}
