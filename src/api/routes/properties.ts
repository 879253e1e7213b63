/**
 * The cloud's system properties (docs/api.md#properties): every signed-in user reads them,
 * operators create, change and remove them (others get 403, as on the operators' routes).
 */
import Type from 'typebox';
import { PROPERTY_LIST, PROPERTY_NAME_MAX, PROPERTY_VALUE_MAX } from '../../domain/properties.ts';
import {
  createProperty,
  deleteProperty,
  getProperty,
  listProperties,
  updateProperty,
} from '../../services/properties.ts';
import { listSchema, storedList } from '../present/list.ts';
import { ApiProperty, presentProperty } from '../present/property.ts';
import { type RouteSpec, created, noContent, ok, page, route } from '../route.ts';
import { NoInput, Scalar, Text } from '../schemas.ts';

const TAGS = ['Service'];

const PropertyInput = Type.Object({
  name: Type.Optional(Text('The name, e.g. CLOUD_HEADER_MAINTENANCE (required when creating)', PROPERTY_NAME_MAX)),
  value: Type.Optional(Text('The value (blank: none)', PROPERTY_VALUE_MAX)),
  description: Type.Optional(Text('What it is for (blank: none)', PROPERTY_VALUE_MAX)),
  fromTime: Type.Optional(Scalar('In force from this time, epoch ms (blank: since ever)')),
  toTime: Type.Optional(Scalar('In force until this time, epoch ms, not before fromTime (blank: for ever)')),
});

export const propertyRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    path: '/properties',
    summary: "List the cloud's system properties (e.g. the maintenance banner)",
    tags: TAGS,
    answers: { 200: listSchema(ApiProperty) },
    list: storedList(PROPERTY_LIST, ['selfURI']),
    handle: async ({ ctx, list }) => {
      const found = await listProperties(ctx, list);
      return page(found.items.map(presentProperty), found.total);
    },
  }),
  route({
    method: 'POST',
    path: '/properties',
    summary: 'Create a system property (operators)',
    tags: TAGS,
    answers: { 201: ApiProperty },
    access: 'admin',
    input: PropertyInput,
    handle: async ({ ctx, user, input }) => created(presentProperty(await createProperty(ctx, user, input))),
  }),
  route({
    method: 'GET',
    path: '/properties/:propertyId',
    summary: 'Read a system property',
    tags: TAGS,
    answers: { 200: ApiProperty },
    handle: async ({ ctx, params }) => ok(presentProperty(await getProperty(ctx, params.propertyId))),
  }),
  route({
    method: 'POST',
    path: '/properties/:propertyId',
    summary: 'Change a system property: the fields sent (operators)',
    tags: TAGS,
    answers: { 200: ApiProperty },
    access: 'admin',
    input: PropertyInput,
    handle: async ({ ctx, user, params, input }) =>
      ok(presentProperty(await updateProperty(ctx, user, params.propertyId, input))),
  }),
  route({
    method: 'DELETE',
    path: '/properties/:propertyId',
    summary: 'Remove a system property (operators)',
    tags: TAGS,
    answers: { 204: 'empty' },
    access: 'admin',
    input: NoInput,
    handle: async ({ ctx, params }) => {
      await deleteProperty(ctx, params.propertyId);
      return noContent();
    },
  }),
];
