/** Field schemas the entities' schemas share (representation.ts#entitySchema). */
import Type from 'typebox';
import { Nullable } from './representation.ts';

export const Id = Type.Integer({ minimum: 1 });
/** Milliseconds since the epoch. */
export const Time = Type.Integer({ description: 'Milliseconds since 1970-01-01 UTC' });
export const MaybeTime = Nullable(Time);
export const Count = Type.Integer({ minimum: 0 });
export const Ratio = Type.Number({ minimum: 0, maximum: 1 });
export const Str = Type.String();
export const MaybeStr = Nullable(Type.String());
export const MaybeInt = Nullable(Type.Integer());
export const Bool = Type.Boolean();
/** The entity's path under /api, without the prefix. */
export const SelfURI = Type.String({ description: 'Path of the entity, relative to /api or /api/v2' });
export const Url = Type.String({ description: 'Absolute URL' });
/** Where the record stands in the list answer it came in (list.ts), null when read on its own. */
export const RowIndex = Nullable(Type.Integer({ minimum: 0, description: 'Position in the whole list, from 0' }));
/** A field kept for clients of the established API that is always null here. */
export const AlwaysNull = Type.Null();
