/**
 * What a record says about being shared (projects, files, device groups): `shared`,
 * `sharedWithCaller`, `sharedById`, `sharedByEmail`, computed here for every presenter at once
 * (docs/api.md#fields-of-the-records, docs/api.md#sharing).
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
 * A record read by someone other than its owner was shared with them (the store lets nobody else
 * read it: docs/api.md#sharing), so it is shared with the caller, by its owner. `stored` is the
 * record's own flag (the owner shared it with someone); `ownerEmail` is the owner's where known.
 */
export function sharingOf(
  ownerId: number | null,
  context: PresentContext | null,
  stored = false,
  ownerEmail: string | null = null,
): Sharing {
  const withCaller = ownerId !== null && context?.user != null && context.user.id !== ownerId;
  return {
    shared: stored || withCaller,
    sharedWithCaller: withCaller,
    sharedById: withCaller ? ownerId : null,
    sharedByEmail: withCaller ? ownerEmail : null,
  };
}
