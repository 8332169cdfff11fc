import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses a server-side request may not reach: every entry of the
 * IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890), multicast,
 * and for IPv6 anything outside global unicast 2000::/3 (RFC 4291 §2.4).
 * Prefixes that embed an IPv4 address are judged by it where the host really
 * reaches that IPv4 address (mapped, NAT64), and refused outright, naming it,
 * where they are tunnels or deprecated forms (compatible, 6to4, Teredo).
 */
type Embedding = 'low32' | '6to4' | 'teredo';
interface Row {
  cidr: string;
  name: string;
  /** Where the IPv4 address sits. */
  embeds?: Embedding;
  /** The verdict is that of the embedded IPv4 address (the connection goes there). */
  judgedByEmbedded?: boolean;
}

const IPV4: readonly Row[] = [
  { cidr: '0.0.0.0/8', name: '"this network" (RFC 791)' },
  { cidr: '10.0.0.0/8', name: 'private-use (RFC 1918)' },
  { cidr: '100.64.0.0/10', name: 'shared address space, carrier-grade NAT (RFC 6598)' },
  { cidr: '127.0.0.0/8', name: 'loopback (RFC 1122)' },
  { cidr: '169.254.0.0/16', name: 'link-local (RFC 3927)' },
  { cidr: '172.16.0.0/12', name: 'private-use (RFC 1918)' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments (RFC 6890)' },
  { cidr: '192.0.2.0/24', name: 'documentation TEST-NET-1 (RFC 5737)' },
  { cidr: '192.31.196.0/24', name: 'AS112-v4 (RFC 7535)' },
  { cidr: '192.52.193.0/24', name: 'AMT (RFC 7450)' },
  { cidr: '192.88.99.0/24', name: 'deprecated 6to4 relay anycast (RFC 7526)' },
  { cidr: '192.168.0.0/16', name: 'private-use (RFC 1918)' },
  { cidr: '192.175.48.0/24', name: 'direct delegation AS112 service (RFC 7534)' },
  { cidr: '198.18.0.0/15', name: 'benchmarking (RFC 2544)' },
  { cidr: '198.51.100.0/24', name: 'documentation TEST-NET-2 (RFC 5737)' },
  { cidr: '203.0.113.0/24', name: 'documentation TEST-NET-3 (RFC 5737)' },
  { cidr: '224.0.0.0/4', name: 'multicast (RFC 5771)' },
  { cidr: '240.0.0.0/4', name: 'reserved (RFC 1112)' },
  { cidr: '255.255.255.255/32', name: 'limited broadcast (RFC 919)' },
];

const IPV6: readonly Row[] = [
  { cidr: '::/128', name: 'unspecified (RFC 4291)' },
  { cidr: '::1/128', name: 'loopback (RFC 4291)' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped (RFC 4291)', embeds: 'low32', judgedByEmbedded: true },
  { cidr: '::ffff:0:0:0/96', name: 'IPv4-translated (RFC 2765)', embeds: 'low32' },
  { cidr: '::/96', name: 'IPv4-compatible, deprecated (RFC 4291 §2.5.5.1)', embeds: 'low32' },
  { cidr: '64:ff9b::/96', name: 'IPv4/IPv6 translation (RFC 6052)', embeds: 'low32', judgedByEmbedded: true },
  { cidr: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation (RFC 8215)', embeds: 'low32' },
  { cidr: '100::/64', name: 'discard-only (RFC 6666)' },
  { cidr: '100:0:0:1::/64', name: 'dummy prefix (RFC 9780)' },
  { cidr: '2001::/32', name: 'Teredo (RFC 4380)', embeds: 'teredo' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (RFC 2928)' },
  { cidr: '2001:db8::/32', name: 'documentation (RFC 3849)' },
  { cidr: '2002::/16', name: '6to4 (RFC 3056)', embeds: '6to4' },
  { cidr: '2620:4f:8000::/48', name: 'direct delegation AS112 service (RFC 7534)' },
  { cidr: '3fff::/20', name: 'documentation (RFC 9637)' },
  { cidr: '5f00::/16', name: 'segment routing SIDs (RFC 9602)' },
  { cidr: 'fc00::/7', name: 'unique-local (RFC 4193)' },
  { cidr: 'fe80::/10', name: 'link-local (RFC 4291)' },
  { cidr: 'fec0::/10', name: 'site-local, deprecated (RFC 3879)' },
  { cidr: 'ff00::/8', name: 'multicast (RFC 4291)' },
];

const parsed = <T extends ipaddr.IPv4 | ipaddr.IPv6>(rows: readonly Row[]) =>
  rows.map((r) => ({ ...r, net: ipaddr.parseCIDR(r.cidr) as [T, number] }));
const v4Table = parsed<ipaddr.IPv4>(IPV4);
// Most specific first, so ::1 is loopback rather than IPv4-compatible, and Teredo wins over 2001::/23.
const v6Table = parsed<ipaddr.IPv6>(IPV6).sort((a, b) => b.net[1] - a.net[1]);
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * The address in canonical form, read as the WHATWG URL host parser reads it
 * (so `2130706433`, `0x7f.1` and `0177.1` are 127.0.0.1, and `::127.0.0.1`
 * is ::7f00:1, as a browser or getaddrinfo would take them); undefined when
 * it is not an IP address. A zone id (`fe80::1%eth0`) is kept apart.
 */
export function canonicalAddress(input: string): { address: ipaddr.IPv4 | ipaddr.IPv6; zone: string | undefined } | undefined {
  let text = input.trim().replace(/^\[(.*)\]$/, '$1');
  let zone: string | undefined;
  const pct = text.indexOf('%');
  if (pct >= 0 && text.includes(':')) {
    zone = text.slice(pct + 1);
    text = text.slice(0, pct);
  }
  if (!text || /[/?#@\s]/.test(text)) return undefined;
  let host: string;
  try {
    host = new URL(`http://${text.includes(':') ? `[${text}]` : text}/`).hostname;
  } catch {
    return undefined;
  }
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare.includes(':')) return ipaddr.IPv6.isValid(bare) ? { address: ipaddr.IPv6.parse(bare), zone } : undefined;
  return ipaddr.IPv4.isValidFourPartDecimal(bare) ? { address: ipaddr.IPv4.parse(bare), zone } : undefined;
}

function embeddedV4(a: ipaddr.IPv6, how: Embedding): ipaddr.IPv4 {
  const b = a.toByteArray();
  if (how === '6to4') return new ipaddr.IPv4(b.slice(2, 6));
  // Teredo (RFC 4380 §4): the client's public IPv4 address, obfuscated by inverting every bit.
  if (how === 'teredo') return new ipaddr.IPv4(b.slice(12, 16).map((x) => x ^ 0xff));
  return new ipaddr.IPv4(b.slice(12, 16));
}

function v4Range(a: ipaddr.IPv4): string | undefined {
  return v4Table.find((r) => a.match(r.net))?.name;
}

function v6Range(a: ipaddr.IPv6): string | undefined {
  const row = v6Table.find((r) => a.match(r.net));
  if (row?.embeds) {
    const v4 = embeddedV4(a, row.embeds);
    const inner = v4Range(v4);
    if (row.judgedByEmbedded) return inner && `${row.name} of ${v4.toString()}, ${inner}`;
    return `${row.name}, embedding ${v4.toString()}${inner ? ` (${inner})` : ''}`;
  }
  if (row) return row.name;
  return a.match(GLOBAL_UNICAST) ? undefined : 'not global unicast (RFC 4291 §2.4)';
}

/**
 * The special-purpose range an address is in, or undefined when a server-side
 * request may go there. Anything that is not an IP address, and any address
 * with a zone id (link-scoped by definition), is refused.
 */
export function reservedRange(input: string): string | undefined {
  const a = canonicalAddress(input);
  if (!a) return 'not an IP address';
  if (a.zone !== undefined) return 'scoped address (zone id)';
  return a.address.kind() === 'ipv4' ? v4Range(a.address as ipaddr.IPv4) : v6Range(a.address as ipaddr.IPv6);
}
