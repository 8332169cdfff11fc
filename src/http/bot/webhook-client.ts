import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';

/**
 * Outbound webhook calls without server-side request forgery: every address
 * a webhook host resolves to is checked, at setWebhook and again at each
 * connection (a DNS answer may change in between), unless the deployment
 * allows private webhooks (GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS).
 */
const reserved = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) reserved.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96]] as const) {
  reserved.addSubnet(net, prefix, 'ipv6');
}

export function isReservedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return reserved.check(mapped[1]!, 'ipv4');
    return reserved.check(address, 'ipv6');
  }
  return reserved.check(address, 'ipv4');
}

/** setWebhook's check: undefined when the URL may be used, else the reason in the official server's style. */
export function webhookUrlChecker(allowPrivate: boolean): (url: URL) => Promise<string | undefined> {
  return async (url) => {
    if (allowPrivate) return undefined;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : (await dns.lookup(host, { all: true })).map((a) => a.address);
    } catch {
      return 'Failed to resolve host: Name or service not known';
    }
    const bad = addresses.find(isReservedAddress);
    return bad ? `IP address ${bad} is reserved` : undefined;
  };
}

export interface WebhookResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A lookup that refuses reserved addresses, so the connection itself cannot be steered inside. */
function guardedLookup(hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isReservedAddress(a.address));
    if (bad) return callback(Object.assign(new Error(`IP address ${bad.address} is reserved`), { code: 'EADDRNOTAVAIL' }), []);
    if ((options as { all?: boolean }).all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
}

/** POSTs JSON to a webhook; resolves with the reply (at most 64 KiB of body) or rejects on network errors and timeouts. */
export function webhookPoster(allowPrivate: boolean, timeoutMs = 30_000) {
  return (url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<WebhookResponse> =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const mod = u.protocol === 'https:' ? https : http;
      const req = mod.request(u, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        timeout: timeoutMs,
        ...(allowPrivate ? {} : { lookup: guardedLookup as never }),
        ...(signal ? { signal } : {}),
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= 64 * 1024) chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('Read timeout expired')));
      req.on('error', reject);
      req.end(body);
    });
}
