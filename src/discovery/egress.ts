/**
 * Where discovery may connect. `spec.url` is written by whoever may create an MCPServer in a
 * namespace, and discovery runs in the operator, which can reach places that tenant cannot:
 * the node's link-local addresses (cloud metadata, with the node's credentials), the API
 * server, the operator's own loopback. The egress policy is a list of denied address ranges
 * with exceptions, checked against the addresses a name resolves to at connect time, and the
 * connection is made to exactly the address that was checked: a name that resolves to a
 * public address for the check and to 169.254.169.254 for the connection (DNS rebinding)
 * cannot get past it. See docs/tenancy.md.
 */

import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';

/** One range of a policy, with the reason a message gives for it. */
export interface AddressRange {
  cidr: string;
  why: string;
}

export interface EgressPolicy {
  /** Ranges discovery never connects to. */
  denied: readonly AddressRange[];
  /** Exceptions: an address in one of these is allowed even if a denied range holds it. */
  allowed: readonly AddressRange[];
}

/**
 * Denied wherever the operator runs: addresses that only make sense from the node itself.
 * 169.254.169.254 is the metadata service of AWS, GCP, Azure, OpenStack and others; AWS also
 * serves it at fd00:ec2::254, Alibaba Cloud at 100.100.100.200; 168.63.129.16 is Azure's
 * platform endpoint (WireServer).
 */
export const ALWAYS_DENIED: readonly AddressRange[] = [
  { cidr: '169.254.0.0/16', why: 'link-local, where cloud metadata services answer' },
  { cidr: 'fe80::/10', why: 'IPv6 link-local' },
  { cidr: 'fd00:ec2::254/128', why: 'the AWS metadata service over IPv6' },
  { cidr: '100.100.100.200/32', why: 'the Alibaba Cloud metadata service' },
  { cidr: '168.63.129.16/32', why: "Azure's platform endpoint" },
];

/**
 * Denied when the operator runs in a pod: there, loopback is the operator itself (its metrics
 * and health endpoints), and 0.0.0.0 or :: reach the same.
 */
export const IN_CLUSTER_DENIED: readonly AddressRange[] = [
  { cidr: '127.0.0.0/8', why: "loopback, the operator's own pod" },
  { cidr: '::1/128', why: "loopback, the operator's own pod" },
  { cidr: '0.0.0.0/8', why: "this host, the operator's own pod" },
  { cidr: '::/128', why: "the unspecified address, the operator's own pod" },
];

export interface EgressSettings {
  /** The operator runs in a pod (KUBERNETES_SERVICE_HOST is set). */
  inCluster: boolean;
  /** The API server's Service address in the cluster (KUBERNETES_SERVICE_HOST). */
  apiServerAddress?: string | undefined;
  /** Ranges denied on top of the defaults. */
  denied: readonly string[];
  /** Exceptions, which win over every denied range, defaults included. */
  allowed: readonly string[];
}

/** The policy for the settings: the defaults, the API server's address, then the operator's own. */
export function egressPolicy(settings: EgressSettings): EgressPolicy {
  const api = settings.apiServerAddress;
  const apiRange =
    settings.inCluster && api !== undefined && isIP(api) !== 0
      ? [{ cidr: `${api}/${isIP(api) === 4 ? 32 : 128}`, why: "the API server's Service" }]
      : [];
  const configured = (why: string) => (cidr: string) => ({ cidr, why });
  return {
    denied: [
      ...ALWAYS_DENIED,
      ...(settings.inCluster ? IN_CLUSTER_DENIED : []),
      ...apiRange,
      ...settings.denied.map(configured('denied by --discovery-denied-cidrs')),
    ],
    allowed: settings.allowed.map(configured('allowed by --discovery-allowed-cidrs')),
  };
}

/** `10.0.0.0/8` or `fd00::/8` as a BlockList of one range; undefined if it is not one. */
function rangeList(cidr: string): BlockList | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  const family = match === null ? 0 : isIP(match[1]!);
  const prefix = Number(match?.[2]);
  if (family === 0 || prefix > (family === 4 ? 32 : 128)) return undefined;
  const list = new BlockList();
  list.addSubnet(match![1]!, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return list;
}

/** Whether `cidr` is an address range in CIDR notation (for flag validation). */
export function isCidr(cidr: string): boolean {
  return rangeList(cidr) !== undefined;
}

/** A compiled policy: which denied range holds an address, unless an exception does. */
export class EgressGuard {
  readonly #denied: { range: AddressRange; list: BlockList }[];
  readonly #allowed: BlockList[];

  constructor(policy: EgressPolicy) {
    const compile = (range: AddressRange) => {
      const list = rangeList(range.cidr);
      if (list === undefined) throw new TypeError(`not an address range: ${range.cidr}`);
      return { range, list };
    };
    this.#denied = policy.denied.map(compile);
    this.#allowed = policy.allowed.map((range) => compile(range).list);
  }

  /**
   * The denied range that holds `address`, or undefined when discovery may connect to it. An
   * IPv6 address that embeds an IPv4 one is judged by both: each form is refused when a denied
   * range holds it and no exception covers it.
   */
  refusal(address: string): AddressRange | undefined {
    const embedded = isIP(address) === 6 ? embeddedIpv4s(address) : [];
    for (const form of [address, ...embedded]) {
      const family = isIP(form) === 6 ? 'ipv6' : 'ipv4';
      // BlockList matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) against IPv4 ranges.
      if (this.#allowed.some((list) => list.check(form, family))) continue;
      const range = this.#denied.find(({ list }) => list.check(form, family))?.range;
      if (range !== undefined) return range;
    }
    return undefined;
  }
}

/**
 * The IPv4 addresses an IPv6 address carries, in the forms that reach them through a
 * translator or a tunnel a cluster may have: IPv4-compatible `::a.b.c.d` and IPv4-mapped
 * `::ffff:a.b.c.d` (RFC 4291 2.5.5), IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765), the NAT64
 * well-known prefix `64:ff9b::/96` (RFC 6052) and its local-use prefix `64:ff9b:1::/48`
 * (RFC 8215), 6to4 `2002:AABB:CCDD::/48` (RFC 3056), and Teredo `2001::/32` (RFC 4380), which
 * names its server and, XORed, its client. Without this, `64:ff9b::a9fe:a9fe` reaches
 * 169.254.169.254 through a NAT64 gateway past a rule that names only the IPv4 range.
 */
function embeddedIpv4s(address: string): string[] {
  const words = ipv6Words(address);
  if (words === undefined) return [];
  const zero = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  const quad = (high: number, low: number) =>
    [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  // :: and ::1 are the unspecified and loopback addresses, not IPv4-compatible ones.
  const compatible = zero(0, 6) && (words[6] !== 0 || words[7]! > 1);
  const mapped = zero(0, 5) && words[5] === 0xffff;
  const translated = zero(0, 4) && words[4] === 0xffff && words[5] === 0;
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6);
  if (compatible || mapped || translated || nat64) return [quad(words[6]!, words[7]!)];
  if (words[0] === 0x2002) return [quad(words[1]!, words[2]!)];
  if (words[0] === 0x2001 && words[1] === 0) {
    return [quad(words[2]!, words[3]!), quad(words[6]! ^ 0xffff, words[7]! ^ 0xffff)];
  }
  if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) return localNat64(words);
  return [];
}

/**
 * Where RFC 6052 (2.2) puts the four octets of the IPv4 address for each prefix length a
 * network may choose within the local-use prefix, and where the suffix after them starts.
 */
const LOCAL_NAT64_FORMATS = [
  { octets: [6, 7, 9, 10], suffix: 11 }, // /48
  { octets: [7, 9, 10, 11], suffix: 12 }, // /56
  { octets: [9, 10, 11, 12], suffix: 13 }, // /64
  { octets: [12, 13, 14, 15], suffix: 16 }, // /96
];

/**
 * The IPv4 addresses an address of `64:ff9b:1::/48` may translate to. The network's prefix
 * length is not in the address, so every format that fits is judged: bits 64-71 are zero and
 * the suffix is zero in every format but /96 (RFC 6052 2.2). An all-zero field is what a
 * format that does not apply reads there, not an address, and is left out.
 */
function localNat64(words: number[]): string[] {
  const bytes = words.flatMap((word) => [word >> 8, word & 0xff]);
  return LOCAL_NAT64_FORMATS.filter(
    ({ suffix }) => suffix === 16 || (bytes[8] === 0 && bytes.slice(suffix).every((b) => b === 0)),
  )
    .map(({ octets }) => octets.map((at) => bytes[at]!))
    .filter((octets) => octets.some((octet) => octet !== 0))
    .map((octets) => octets.join('.'));
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad allowed); undefined if not one. */
function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((word) => parseInt(word, 16));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const gap = 8 - front.length - back.length;
  return [...front, ...Array<number>(tail === undefined ? 0 : gap).fill(0), ...back];
}

export type Lookup = (hostname: string) => Promise<readonly string[]>;

/** Every address the system resolver gives for a name (getaddrinfo: /etc/hosts, search domains). */
const systemLookup: Lookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** A connection the guard refused; the HTTP layer turns it into MCPOP_DISCOVERY_EGRESS_DENIED. */
export class EgressRefusal extends Error {
  /** The address, or the name and the address it resolved to. */
  readonly where: string;
  readonly range: AddressRange;

  constructor(where: string, range: AddressRange) {
    super(`${where} is in ${range.cidr} (${range.why})`);
    this.name = 'EgressRefusal';
    this.where = where;
    this.range = range;
  }
}

/**
 * An undici dispatcher whose every new connection goes through the guard: a literal address
 * is checked as is; a name is resolved here, all its addresses are checked (one denied address
 * refuses the name, which is what a rebinding attempt looks like), and the socket is opened to
 * the first of them, with the name kept for TLS (SNI and certificate check). Connections are
 * pooled per origin as usual; each new one is checked again.
 */
export function guardedDispatcher(guard: EgressGuard, lookup: Lookup = systemLookup): Agent {
  const connect = buildConnector({});
  return new Agent({
    connect(options, callback) {
      const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
      checkedAddress(guard, host, lookup).then(
        (address) =>
          connect(
            {
              ...options,
              hostname: address,
              servername: options.servername ?? (isIP(host) === 0 ? host : undefined),
            },
            callback,
          ),
        (error: Error) => callback(error, null),
      );
    },
  });
}

async function checkedAddress(guard: EgressGuard, host: string, lookup: Lookup): Promise<string> {
  const addresses = isIP(host) === 0 ? await lookup(host) : [host];
  for (const address of addresses) {
    const range = guard.refusal(address);
    if (range === undefined) continue;
    throw new EgressRefusal(address === host ? address : `${host} (${address})`, range);
  }
  const first = addresses[0];
  if (first === undefined) throw new Error(`${host} resolves to no address`);
  return first;
}
