/**
 * Where a run's hookURL may point. The server sends the POST, so an address inside its own network
 * (loopback, private ranges, link-local with the clouds' metadata services, the database's port)
 * would let any user make requests from it: such destinations are refused unless the operator
 * lists their network in `--hook-allow-networks` (docs/api.md#hooks).
 *
 * Checked twice: at run start on the URL's host when it is an address (or `localhost`), and at
 * send time on every address the name resolves to, the connection going only to a checked one.
 * node:net's BlockList is a pure matcher (no I/O); it also matches IPv4-mapped IPv6 (::ffff:a.b.c.d)
 * against IPv4 rules, and the other IPv6 forms that embed an IPv4 address are listed below.
 */
import { BlockList, isIP } from 'node:net';
import { InvalidParameterError } from './errors.ts';

type Family = 'ipv4' | 'ipv6';

/** Why a range is refused, as the error says it, and the ranges. */
const REFUSED: ReadonlyArray<readonly [reason: string, ranges: readonly string[]]> = [
  ['a loopback address', ['127.0.0.0/8', '::1/128']],
  ['an unspecified address', ['0.0.0.0/8', '::/128']],
  ['a private address', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['a shared (carrier-grade NAT) address', ['100.64.0.0/10']],
  ['a unique local address', ['fc00::/7']],
  ['a link-local address (cloud metadata services live there)', ['169.254.0.0/16', 'fe80::/10']],
  ['a cloud metadata address', ['168.63.129.16/32', '100.100.100.200/32', '192.0.0.192/32', 'fd00:ec2::254/128']],
  ['a multicast address', ['224.0.0.0/4', 'ff00::/8']],
  [
    'a reserved address',
    [
      '192.0.0.0/24',
      '192.0.2.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '240.0.0.0/4',
      '100::/64',
      '2001:db8::/32',
      'fec0::/10',
    ],
  ],
];

/** IPv6 prefixes that carry an IPv4 address in their last 32 bits (mapped, NAT64, IPv4-compatible). */
const EMBEDDING_PREFIXES = ['::ffff:', '64:ff9b::', '64:ff9b:1::', '::'];

export interface HookDestinationRules {
  /** Why the address may not be a hook's destination, or null when it may. */
  refusal(address: string): string | null;
}

export interface Network {
  readonly address: string;
  readonly prefix: number;
  readonly family: Family;
}

/** Parses `a.b.c.d/n`, `x::y/n` or a bare address (a /32 or /128); null when it is none of them. */
export function parseNetwork(text: string): Network | null {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  const version = isIP(address);
  const max = version === 6 ? 128 : 32;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (version === 0 || rest.length > 0 || !(prefix >= 0 && prefix <= max)) return null;
  return { address, prefix, family: version === 6 ? 'ipv6' : 'ipv4' };
}

function ipv4ToHex(address: string): string {
  const bytes = address.split('.').map(Number);
  return `${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
}

function addNetwork(list: BlockList, text: string): void {
  const network = parseNetwork(text);
  if (network === null) throw new Error(`'${text}' is not a network`);
  const { address, prefix, family } = network;
  list.addSubnet(address, prefix, family);
  if (family === 'ipv4') {
    // The same IPv4 network inside the IPv6 forms that embed one, 6to4 (2002:AABB:CCDD::/48) included.
    for (const embedding of EMBEDDING_PREFIXES)
      list.addSubnet(`${embedding}${ipv4ToHex(address)}`, 96 + prefix, 'ipv6');
    list.addSubnet(`2002:${ipv4ToHex(address)}::`, 16 + prefix, 'ipv6');
  }
}

// Building the lists takes most of a millisecond: once per setting (the one array of the config).
const built = new WeakMap<readonly string[], HookDestinationRules>();
const NONE: readonly string[] = [];

/** The rules, given the networks the operator allows (`--hook-allow-networks`). */
export function hookDestinationRules(allowedNetworks: readonly string[] = NONE): HookDestinationRules {
  let rules = built.get(allowedNetworks);
  if (rules === undefined) {
    rules = buildRules(allowedNetworks);
    built.set(allowedNetworks, rules);
  }
  return rules;
}

function buildRules(allowedNetworks: readonly string[]): HookDestinationRules {
  const refused = REFUSED.map(([reason, ranges]) => {
    const list = new BlockList();
    for (const range of ranges) addNetwork(list, range);
    return { reason, list };
  });
  const allowed = new BlockList();
  for (const network of allowedNetworks) addNetwork(allowed, network);
  return {
    refusal(address) {
      const version = isIP(address);
      if (version === 0) return 'not an IP address';
      const family: Family = version === 6 ? 'ipv6' : 'ipv4';
      if (allowed.check(address, family)) return null;
      return refused.find(({ list }) => list.check(address, family))?.reason ?? null;
    },
  };
}

/** The host of a URL as an address, when it is one (the WHATWG parser has already normalised 0x7f.1 and 2130706433). */
export function literalAddress(host: string): string | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIP(bare) === 0 ? null : bare;
}

/** Names that always mean this machine (RFC 6761), whatever DNS says. */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Why a URL's host is refused without asking DNS (an address in any spelling, or localhost), or
 * null when only its resolved addresses can tell (checked as the socket connects).
 */
export function hostRefusal(host: string, rules: HookDestinationRules): string | null {
  const address = isLocalhostName(host) ? '127.0.0.1' : literalAddress(host);
  return address === null ? null : rules.refusal(address);
}

/**
 * At run start: a hookURL whose host is a refused address, or localhost, is a 400 naming hookURL.
 * Names are not resolved here (DNS may change before the run ends); they are checked at send time.
 */
export function checkHookUrl(url: string, rules: HookDestinationRules): void {
  const host = new URL(url).hostname;
  const refusal = hostRefusal(host, rules);
  if (refusal !== null) {
    throw new InvalidParameterError(
      'hookURL',
      `Parameter 'hookURL' points at ${host}, ${refusal}; hooks may only go to addresses outside the server's network (an operator can allow networks with --hook-allow-networks)`,
    );
  }
}
