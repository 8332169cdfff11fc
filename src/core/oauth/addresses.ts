import { BlockList, isIP } from 'node:net';

/**
 * Per-client address allow-lists (docs/oauth.md, Application-level access): CIDR blocks such as
 * `203.0.113.0/24`, `2001:db8::/32`, or single addresses. Stored as written;
 * parsed here, where a malformed entry is refused at registration.
 */

/** An IPv4 address as it arrives on a dual-stack socket (`::ffff:192.0.2.1`) is compared as IPv4. */
export function plainAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

interface Block {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** One entry, or undefined when it is not an address or a CIDR block. */
function parseBlock(entry: string): Block | undefined {
  const [addr, bits, extra] = entry.trim().split('/');
  if (extra !== undefined || !addr) return undefined;
  const address = plainAddress(addr);
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Normalises an allow-list; throws an Error naming the first bad entry. */
export function parseAllowList(entries: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const b = parseBlock(entry);
    if (!b) throw new Error(`not an IP address or CIDR block: ${entry.slice(0, 100)}`);
    out.push(`${b.address}/${b.prefix}`);
  }
  return [...new Set(out)];
}

/** A matcher for a list of CIDR blocks; invalid entries (never stored) match nothing. */
export function addressMatcher(entries: readonly string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const e of entries) {
    const b = parseBlock(e);
    if (b) list.addSubnet(b.address, b.prefix, b.family);
  }
  return (address) => {
    if (!address) return false;
    const a = plainAddress(address);
    const version = isIP(a);
    return version !== 0 && list.check(a, version === 4 ? 'ipv4' : 'ipv6');
  };
}

const cache = new Map<string, (address: string | undefined) => boolean>();

/** Whether `address` is inside one of the blocks; matchers are built once per list. */
export function addressAllowed(entries: readonly string[], address: string | undefined): boolean {
  const key = entries.join(' ');
  let match = cache.get(key);
  if (!match) {
    if (cache.size > 1000) cache.clear();
    match = addressMatcher(entries);
    cache.set(key, match);
  }
  return match(address);
}
