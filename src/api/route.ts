/**
 * A route of the public API, declared as data: method, path (relative to /api, in its `me` form),
 * who may call it, the schema of its input and a handler that returns an outcome. The table is
 * registered by routes-register.ts, which adds the aliases and the OpenAPI docs (known-paths.ts answers the 405s).
 */
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { ListQuery, ListSpec } from '../domain/list-query.ts';
import type { User } from '../domain/users.ts';
import type { ByteRange } from '../domain/byte-range.ts';
import type { Context } from '../services/context.ts';
import type { PresentContext } from './present/context.ts';
import type { Rep } from './present/representation.ts';
import type { Credential } from './plugins/auth.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** Who may call: signed-in users, anyone, admins, or device-host agents (agent protocol only). */
export type Access = 'user' | 'anonymous' | 'admin' | 'agent';

/** `/me/projects/:projectId/runs/:runId` → `{ projectId: number; runId: number }`. */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { readonly [K in Name]: number } & PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { readonly [K in Name]: number }
    : unknown;

export interface Call<Params, Input, Who extends User | null, F extends string = string> {
  readonly params: Params;
  /** Query parameters, merged with form or JSON body parameters on writes (the body wins). */
  readonly input: Input;
  readonly user: Who;
  /** How the caller authenticated (null when anonymous). */
  readonly credential: Credential | null;
  readonly ctx: Context;
  readonly present: PresentContext;
  readonly request: FastifyRequest;
  /**
   * The list parameters, parsed and checked against the route's `list` spec (docs/api.md#lists);
   * on a route without one, the whole list (offset 0, limit 0, no filter).
   */
  readonly list: ListQuery<F>;
}

export interface ByteAnswer {
  /**
   * Opens the bytes when the answer is sent, all of them or, where `ranged`, the part a Range
   * header asked for (inclusive ends).
   */
  open(range?: ByteRange): Readable;
  /** Stored files answer Range requests (206); what is written as it is sent does not. */
  readonly ranged: boolean;
  readonly contentType: string;
  /**
   * Known ahead for stored files, so clients see Content-Length (docs/api.md#files: downloads keep
   * their exact bytes); null for what is written as it is sent (zips), which goes out chunked.
   */
  readonly length: number | null;
  readonly fileName: string;
  /** Images, text and videos are shown in place; everything else is offered as a download. */
  readonly inline: boolean;
}

/** Query parameters other than the list grammar's that `next`/`previous` repeat (e.g. `withPublic`). */
export type LinkParams = Readonly<Record<string, string | readonly string[]>> | undefined;

export type Outcome =
  | { readonly kind: 'rep'; readonly status: number; readonly body: Rep }
  | {
      readonly kind: 'list';
      readonly status: number;
      readonly items: readonly Rep[];
      /** Matching items before paging, or null when `items` are all of them, to filter and page here. */
      readonly total: number | null;
      readonly extra: LinkParams;
    }
  | { readonly kind: 'empty'; readonly status: number }
  | { readonly kind: 'bytes'; readonly status: number; readonly bytes: ByteAnswer }
  | { readonly kind: 'text'; readonly status: number; readonly contentType: string; readonly text: string };

export const ok = (body: Rep): Outcome => ({ kind: 'rep', status: 200, body });
export const created = (body: Rep): Outcome => ({ kind: 'rep', status: 201, body });
/** One page of a list the store already filtered, sorted and paged by `call.list`, and its total. */
export const page = (items: readonly Rep[], total: number, extra?: LinkParams): Outcome => ({
  kind: 'list',
  status: 200,
  items,
  total,
  extra,
});
/**
 * Every item of a list held in memory: the route table applies `call.list` to them
 * (domain/list-eval.ts, the store's semantics) on the fields the items show.
 */
export const whole = (items: readonly Rep[], extra?: LinkParams): Outcome => ({
  kind: 'list',
  status: 200,
  items,
  total: null,
  extra,
});
export const noContent = (): Outcome => ({ kind: 'empty', status: 204 });
/** Binary downloads answer their bytes whatever Accept says (docs/api.md#formats). */
export const bytes = (answer: ByteAnswer): Outcome => ({ kind: 'bytes', status: 200, bytes: answer });
export const text = (contentType: string, body: string): Outcome => ({
  kind: 'text',
  status: 200,
  contentType,
  text: body,
});

/**
 * What a route answers when it succeeds, by status: the schema of the entity it presents (the
 * OpenAPI document shows it and the JSON answer is serialized from it), bytes of a media type
 * (downloads, logs, reports), or nothing (204). Errors answer present/error.ts's ApiError.
 */
export type Answers = Readonly<Partial<Record<200 | 201 | 204, TSchema | BytesAnswer | 'empty'>>>;

export interface BytesAnswer {
  /** The media type documented; downloads answer the stored file's own. */
  readonly bytes: string;
  readonly description: string;
}

export const bytesOf = (mediaType: string, description: string): BytesAnswer => ({ bytes: mediaType, description });

export interface RouteSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly summary: string;
  readonly tags: readonly string[];
  readonly access: Access;
  readonly input?: TSchema;
  readonly answers: Answers;
  /** A multipart upload: the handler reads the file part from the request itself. */
  readonly upload?: boolean;
  /** It checks a password: failures are counted per address too (plugins/password-guesses.ts). */
  readonly takesPassword?: boolean;
  /**
   * A list (docs/api.md#lists): the fields it filters and sorts on, its default sort, and what
   * `search` looks in. The route table takes and checks the list parameters for it.
   */
  readonly list?: RouteList;
  handle(call: Call<Record<string, number>, unknown, User | null>): Promise<Outcome>;
}

export interface RouteList<F extends string = string> {
  readonly spec: ListSpec<F>;
  /** Fields `search` matches (by the store's columns for lists it pages itself). */
  readonly search: readonly string[];
  /**
   * Fields the items show that the store cannot yet filter or sort on (no column or expression
   * for them): named here so that test/integration/every-list.test.ts holds the rest to the spec.
   */
  readonly shownOnly: readonly string[];
}

type Caller<A extends Access> = A extends 'anonymous' ? User | null : User;

/** Declares a route with its parameter and input types inferred from the path and schema. */
export function route<
  const P extends string,
  A extends Access = 'user',
  S extends TSchema = TSchema,
  F extends string = string,
>(spec: {
  method: HttpMethod;
  path: P;
  summary: string;
  tags: readonly string[];
  access?: A;
  input?: S;
  answers: Answers;
  upload?: boolean;
  takesPassword?: boolean;
  list?: RouteList<F>;
  handle(call: Call<PathParams<P>, Static<S>, Caller<A>, F>): Promise<Outcome>;
}): RouteSpec {
  return {
    ...spec,
    list: spec.list as RouteList | undefined,
    access: spec.access ?? 'user',
    handle: spec.handle as RouteSpec['handle'],
  };
}
