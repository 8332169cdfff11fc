import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import type { DestinationCheck, DestinationRefusal } from '../../core/outbound.js';
import { canonicalAddress, reservedRange } from './addresses.js';

/** node:dns `lookup`, as net.connect calls it and as tests replace it. */
export type Lookup = (hostname: string, options: LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export const systemLookup: Lookup = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * Names that are local by definition, whatever DNS says: localhost (RFC 6761
 * §6.3), mDNS .local (RFC 6762), .internal (ICANN's private-use TLD),
 * .home.arpa (RFC 8375), and single-label names, which resolve through the
 * search domains of the network we sit in.
 */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa', '.localdomain'];
export function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || !h.includes('.') || LOCAL_SUFFIXES.some((s) => h.endsWith(s));
}

/**
 * The one rule for where a server-side request may go. `allowPrivate`
 * (GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS, or a destination the operator
 * configured) lifts the private-address and local-name refusals, here and
 * nowhere else.
 */
export interface DestinationRule {
  /** An IP address or a host name, as in a URL (brackets allowed). */
  screen(host: string): DestinationRefusal | undefined;
}

export function destinationRule(allowPrivate: boolean): DestinationRule {
  return {
    screen(host) {
      if (allowPrivate) return undefined;
      const bare = host.replace(/^\[(.*)\]$/, '$1');
      const literal = canonicalAddress(bare);
      if (literal) {
        const range = reservedRange(bare);
        return range ? { reason: 'address', host: bare, address: literal.address.toString(), range } : undefined;
      }
      return isLocalName(bare) ? { reason: 'name', host: bare } : undefined;
    },
  };
}

/** An error net.connect passes on: the address it would have connected to is refused. */
export function refusedError(r: DestinationRefusal): NodeJS.ErrnoException {
  const message = r.reason === 'address' ? `IP address ${r.address} is reserved: ${r.range}`
    : r.reason === 'name' ? `host ${r.host} is a local name: loopback or private network` : 'invalid destination';
  return Object.assign(new Error(message), { code: 'EADDRNOTAVAIL' });
}

/**
 * The `lookup` net.connect uses: every address the name resolves to is
 * checked, and the connection goes to one of those checked addresses. As the
 * check and the connection use the same answer, a DNS server that answers
 * differently the second time (rebinding) gains nothing.
 */
export function guardedLookup(rule: DestinationRule, lookup: Lookup) {
  return (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!addresses.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      for (const a of addresses) {
        const refusal = rule.screen(a.address);
        if (refusal) return callback(refusedError(refusal), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** The registration-time check (see DestinationCheck): the same rule, and optionally the same lookup. */
export function destinationCheck(rule: DestinationRule, lookup: Lookup): DestinationCheck {
  return async (raw, opts = {}) => {
    let url: URL;
    try {
      url = typeof raw === 'string' ? new URL(raw) : raw;
    } catch {
      return { reason: 'invalid' };
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!host) return { reason: 'invalid' };
    const literal = canonicalAddress(host);
    if (opts.resolve && !literal) {
      let addresses: LookupAddress[];
      try {
        addresses = await new Promise((resolve, reject) => lookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list))));
      } catch {
        return { reason: 'unresolvable', host };
      }
      if (!addresses.length) return { reason: 'unresolvable', host };
      for (const a of addresses) {
        const refusal = rule.screen(a.address);
        if (refusal) return refusal;
      }
    }
    return rule.screen(host);
  };
}
