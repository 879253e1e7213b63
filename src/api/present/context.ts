/** What presenters may know about the request: who asks, and the public base URL for links. */
import type { User } from '../../domain/users.ts';

export interface PresentContext {
  /** The authenticated user, or null on anonymous routes. */
  readonly user: User | null;
  /** Public base URL without a trailing slash, possibly with a context path. */
  readonly baseUrl: string;
  readonly now: number;
}

export function userPath(context: PresentContext): string {
  return context.user === null ? '' : `/users/${context.user.id}`;
}
