/**
 * The cloud's system properties (docs/api.md#properties). Reading is open to every signed-in user,
 * since a property belongs to the whole cloud; the routes that write are for operators only.
 */
import { NotFoundError } from '../domain/errors.ts';
import type { ListQuery } from '../domain/list-query.ts';
import { type PROPERTY_LIST, type Property, type PropertyInput, propertyDraft } from '../domain/properties.ts';
import type { User } from '../domain/users.ts';
import type { Context } from './context.ts';
import type { Page } from './views.ts';

type PropertyField = keyof (typeof PROPERTY_LIST)['fields'];

export function listProperties(ctx: Context, query: ListQuery<PropertyField>): Promise<Page<Property>> {
  return ctx.store.properties.list(query);
}

export async function getProperty(ctx: Context, id: number): Promise<Property> {
  const found = await ctx.store.properties.find(id);
  if (found === undefined) throw new NotFoundError('Property', id);
  return found;
}

export async function createProperty(ctx: Context, operator: User, input: PropertyInput): Promise<Property> {
  const id = await ctx.store.properties.insert(propertyDraft(input), operator.id, ctx.clock());
  return getProperty(ctx, id);
}

/** Changes the fields sent; the others keep their values. */
export async function updateProperty(
  ctx: Context,
  operator: User,
  id: number,
  input: PropertyInput,
): Promise<Property> {
  const draft = propertyDraft(input, await getProperty(ctx, id));
  if (!(await ctx.store.properties.update(id, draft, operator.id, ctx.clock())))
    throw new NotFoundError('Property', id);
  return getProperty(ctx, id);
}

export async function deleteProperty(ctx: Context, id: number): Promise<void> {
  if (!(await ctx.store.properties.delete(id))) throw new NotFoundError('Property', id);
}
