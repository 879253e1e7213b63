/** A system property (docs/api.md#properties), shaped as the public clients' Property model. */
import Type from 'typebox';
import type { Property } from '../../domain/properties.ts';
import { Id, MaybeStr, MaybeTime, SelfURI, Str, Time } from './fields.ts';
import { Nullable, type Rep, entity, entitySchema } from './representation.ts';

export const ApiProperty = entitySchema('apiProperty', {
  id: Id,
  selfURI: SelfURI,
  name: Str,
  value: MaybeStr,
  description: MaybeStr,
  fromTime: MaybeTime,
  toTime: MaybeTime,
  updateTime: Time,
  updatedById: Nullable(Type.Integer({ minimum: 1, description: 'null: the operator’s account is gone' })),
  updatedByDisplayName: MaybeStr,
});

export function presentProperty(property: Property): Rep {
  return entity(ApiProperty, {
    id: property.id,
    selfURI: `/properties/${property.id}`,
    name: property.name,
    value: property.value,
    description: property.description,
    fromTime: property.fromTime,
    toTime: property.toTime,
    updateTime: property.updateTime,
    updatedById: property.updatedById,
    updatedByDisplayName: property.updatedByDisplayName,
  });
}
