/**
 * The URLs the route table declares (each path under `/api` and `/api/v2`, `/me/...` also as
 * `/users/:userId/...`, docs/api.md#paths) and the methods each answers. The not-found handler
 * asks it whether an unrouted request named a known path with another method: that is a 405 with
 * `Allow`, not a 404. One lookup rather than a route per missing method: those were some 2,200
 * routes, built again with every app.
 */
import { errorCodes, type FastifyError, type FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import { MethodNotAllowedError } from '../domain/errors.ts';
import type { Access, HttpMethod, RouteSpec } from './route.ts';

const PREFIXES = ['/api/v2', '/api'] as const;
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Fastify's router options; the lookup uses the same, so that both match a path alike. */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 200 } as const;

/** Every URL a route spec answers on, the documented one (`/api/v2` + its path) first. */
export function urlsOf(spec: RouteSpec): string[] {
  const variants =
    spec.path === '/me' || spec.path.startsWith('/me/')
      ? [spec.path, spec.path.replace(/^\/me/, '/users/:userId')]
      : [spec.path];
  return PREFIXES.flatMap((prefix) => variants.map((variant) => prefix + variant));
}

export interface KnownPaths {
  /**
   * Why a request no route took is not a plain 404: its path is a known one and its method
   * another the table uses (405, with the methods for `Allow`), or a parameter of it is longer
   * than the router takes (414, as Fastify answers it when a route of the method has the path).
   */
  refusal(request: FastifyRequest): MethodNotAllowedError | FastifyError | undefined;
  /**
   * Who may call the request's route. A known path with another method is answered as an
   * anonymous route would be: credentials it carries are still checked (a bad key is a 401) and
   * counted by the rate limits.
   */
  accessOf(request: FastifyRequest): Access | undefined;
  /**
   * The known URLs whose missing methods need a route of their own: where another URL that has
   * the method would take the request (`POST /runs/config` would reach `POST /runs/:runId`), a
   * 405 route on the more specific URL keeps it from there, as the router prefers static segments.
   */
  readonly shadowed: readonly {
    readonly url: string;
    readonly method: HttpMethod;
    readonly allowed: readonly HttpMethod[];
  }[];
}

export function knownPaths(specs: readonly RouteSpec[]): KnownPaths {
  const methodsByUrl = new Map<string, HttpMethod[]>();
  for (const spec of specs) {
    for (const url of urlsOf(spec)) {
      const methods = methodsByUrl.get(url) ?? [];
      if (!methods.includes(spec.method)) methods.push(spec.method);
      methodsByUrl.set(url, methods);
    }
  }
  // One method's tree holds every known URL: finding a request's path there picks the URL
  // Fastify's router would pick among them (static segments before parameters).
  const router = FindMyWay({ ...ROUTER_OPTIONS, onMaxParamLength: () => undefined });
  for (const [url, methods] of methodsByUrl) router.on('GET', url, () => undefined, methods);
  const shadowed: { url: string; method: HttpMethod; allowed: readonly HttpMethod[] }[] = [];
  for (const method of METHODS) {
    const withMethod = FindMyWay(ROUTER_OPTIONS);
    for (const [url, methods] of methodsByUrl)
      if (methods.includes(method)) withMethod.on(method, url, () => undefined);
    for (const [url, methods] of methodsByUrl) {
      if (methods.includes(method)) continue;
      // A path of the URL's own: each parameter a value no static segment has.
      const sample = url.replace(/:\w+/g, '0');
      if (withMethod.find(method, sample) !== null) shadowed.push({ url, method, allowed: methods });
    }
  }
  const refusals = new WeakMap<FastifyRequest, MethodNotAllowedError | FastifyError | undefined>();
  const lookUp = (request: FastifyRequest) => {
    // HEAD is refused where GET is: Fastify answers HEAD on every GET route.
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (!request.is404 || !(METHODS as readonly string[]).includes(method)) return undefined;
    const found = router.find('GET', request.url);
    if (found === null) return undefined;
    const allowed = found.store as readonly HttpMethod[] | null;
    if (allowed === null) return new errorCodes.FST_ERR_MAX_PARAM_LENGTH(request.url);
    return new MethodNotAllowedError(method, request.url.split('?')[0]!, allowed);
  };
  const refusal = (request: FastifyRequest) => {
    if (!refusals.has(request)) refusals.set(request, lookUp(request));
    return refusals.get(request);
  };
  return {
    shadowed,
    refusal,
    accessOf: (request) =>
      request.routeOptions.config.access ??
      (refusal(request) instanceof MethodNotAllowedError ? 'anonymous' : undefined),
  };
}
