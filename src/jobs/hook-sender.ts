/**
 * Sends one hook POST to a destination checked on the address actually connected to. The name is
 * resolved once, by the lookup given to the socket, which keeps only the addresses the rules
 * allow: the connection goes to one of those, so a DNS answer that changes between a check and the
 * connect (rebinding) cannot lead it elsewhere. An address in the URL is checked before anything
 * is sent (sockets do not look addresses up). No connection is reused and redirects are not
 * followed: a 3xx is an answer like any other.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { type HookDestinationRules, hostRefusal } from '../domain/hook-destinations.ts';

/** The destination is not allowed: retrying will not help. */
export class HookRefusedError extends Error {
  readonly code = 'EHOOKREFUSED';
}

export type Resolve = (
  hostname: string,
  callback: (error: Error | null, addresses: ReadonlyArray<{ address: string; family: number }>) => void,
) => void;

const systemResolve: Resolve = (hostname, callback) =>
  dns.lookup(hostname, { all: true }, (error, addresses) => callback(error, addresses ?? []));

export interface HookRequest {
  readonly url: string;
  /** A form, or text of `contentType` (Slack's JSON). */
  readonly body: URLSearchParams | string;
  readonly contentType?: string;
  readonly timeoutMs: number;
  readonly rules: HookDestinationRules;
  /** How names are resolved (tests give their own); the system resolver by default. */
  readonly resolve?: Resolve;
}

/** Resolves, then answers only with the addresses the rules allow, or fails with HookRefusedError. */
export function checkedLookup(rules: HookDestinationRules, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    const reply = callback as (
      error: Error | null,
      address: string | ReadonlyArray<{ address: string; family: number }>,
      family?: number,
    ) => void;
    resolve(hostname, (error, addresses) => {
      if (error !== null) return reply(error, '');
      const allowed = addresses.filter(({ address }) => rules.refusal(address) === null);
      const wanted =
        options.family === 4 || options.family === 6
          ? allowed.filter(({ family }) => family === options.family)
          : allowed;
      if (wanted.length === 0) {
        const first = addresses[0];
        const why =
          first === undefined
            ? 'no address'
            : `${first.address}, ${rules.refusal(first.address) ?? `not IPv${String(options.family)}`}`;
        return reply(new HookRefusedError(`refused: ${hostname} resolves to ${why}`), '');
      }
      if (options.all === true) return reply(null, wanted);
      return reply(null, wanted[0]!.address, wanted[0]!.family);
    });
  };
}

/** POSTs the body; resolves with the answer's status, or rejects (HookRefusedError when refused). */
export function postHook(request: HookRequest): Promise<number> {
  const url = new URL(request.url);
  const refusal = hostRefusal(url.hostname, request.rules);
  if (refusal !== null) return Promise.reject(new HookRefusedError(`refused: ${url.hostname} is ${refusal}`));
  const body = request.body.toString();
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      url,
      {
        method: 'POST',
        agent: false,
        lookup: checkedLookup(request.rules, request.resolve),
        signal: AbortSignal.timeout(request.timeoutMs),
        headers: {
          'content-type': request.contentType ?? 'application/x-www-form-urlencoded;charset=UTF-8',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'devicecloud-hook',
        },
      },
      (response) => {
        response.resume();
        response.destroy();
        resolve(response.statusCode ?? 0);
      },
    );
    outgoing.on('error', (error) =>
      reject(!(error instanceof HookRefusedError) && error.cause instanceof HookRefusedError ? error.cause : error),
    );
    outgoing.end(body);
  });
}
