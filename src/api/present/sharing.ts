/**
 * What a record says about being shared (projects, files, device groups): `shared`,
 * `sharedWithCaller`, `sharedById`, `sharedByEmail`. Kept in this one place so that sharing, when it
 * is offered, is computed here for every presenter at once (docs/api.md#fields-of-the-records).
 */
import type { PresentContext } from './context.ts';
import { Bool, Id, MaybeStr } from './fields.ts';
import { Nullable } from './representation.ts';

export const SharingFields = {
  shared: Bool,
  sharedWithCaller: Bool,
  sharedById: Nullable(Id),
  sharedByEmail: MaybeStr,
};

export interface Sharing {
  readonly shared: boolean;
  readonly sharedWithCaller: boolean;
  readonly sharedById: number | null;
  readonly sharedByEmail: string | null;
}

/**
 * Nothing is shared with other users yet: every record is read by its owner alone, so it is not
 * shared with the caller and nobody shared it. `stored` is the record's own flag where it has one.
 */
export function sharingOf(_ownerId: number | null, _context: PresentContext | null, stored = false): Sharing {
  return { shared: stored, sharedWithCaller: false, sharedById: null, sharedByEmail: null };
}
