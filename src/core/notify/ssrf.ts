import { BlockList, isIP } from 'node:net';

/**
 * Server-side request forgery guard for notification URLs: loopback,
 * private, link-local, carrier-grade NAT, multicast, documentation and other
 * special-purpose ranges (RFC 6890) are refused unless the deployment allows
 * private webhooks. Checked on the URL when an endpoint is created and on
 * every resolved address when a delivery connects (DNS can change).
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001::', 23],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) or compatible IPv6 address. */
function embeddedV4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4) return blocked.check(v4, 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

/** Why a webhook URL is refused, or undefined when it is acceptable. */
export function webhookUrlProblem(raw: string, allowPrivate: boolean): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must use http or https';
  if (u.username || u.password) return 'url must not carry credentials';
  if (u.hash) return 'url must not have a fragment';
  if (raw.length > 2000) return 'url is too long';
  if (allowPrivate) return undefined;
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host)) return isPrivateAddress(host) ? 'url points at a loopback or private-network address (set GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS=true to allow)' : undefined;
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal') || !host.includes('.')) {
    return 'url points at a local host name (set GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS=true to allow)';
  }
  return undefined;
}
