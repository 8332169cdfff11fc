import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { HttpAnswer, HttpPost, Transport } from '../core/notify/transport.js';
import { isPrivateAddress } from '../core/notify/ssrf.js';

const EXCERPT_BYTES = 2048;
/** More than this and the answer is cut off (the socket is dropped rather than read forever). */
const MAX_BODY_BYTES = 256 * 1024;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup that refuses private, loopback and other special addresses, so
 * the address actually connected to is the one checked (a name cannot pass
 * the check and then resolve elsewhere: DNS rebinding).
 */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const list = addresses as LookupAddress[];
    if (list.length === 0 || list.some((a) => isPrivateAddress(a.address))) {
      const refused = Object.assign(new Error(`${hostname} resolves to a private or loopback address (refused; GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS)`), { code: 'EPRIVATEADDRESS' });
      return callback(refused, '');
    }
    if (options.all) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}

/** POSTs over node:http(s) with keep-alive; with `allowPrivate` false every connection is checked against SSRF. */
export function httpTransport(opts: { allowPrivate: boolean; maxSockets?: number }): Transport {
  const agentOpts = { keepAlive: true, maxSockets: opts.maxSockets ?? 128 };
  const agents = { http: new http.Agent(agentOpts), https: new https.Agent(agentOpts) };
  const fail = (error: string): HttpAnswer => ({ status: null, retryAfter: undefined, excerpt: '', error });

  return {
    post(req: HttpPost): Promise<HttpAnswer> {
      let url: URL;
      try {
        url = new URL(req.url);
      } catch {
        return Promise.resolve(fail('invalid url'));
      }
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (!opts.allowPrivate && isIP(host) && isPrivateAddress(host)) return Promise.resolve(fail('refused: private or loopback address'));
      const secure = url.protocol === 'https:';
      return new Promise((resolve) => {
        let settled = false;
        const finish = (a: HttpAnswer) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(a);
        };
        const body = Buffer.from(req.body);
        const r = (secure ? https : http).request(url, {
          method: 'POST',
          agent: secure ? agents.https : agents.http,
          headers: { ...req.headers, 'content-length': String(body.length) },
          ...(req.signal ? { signal: req.signal } : {}),
          ...(opts.allowPrivate ? {} : { lookup: publicOnlyLookup as unknown as typeof dnsLookup }),
        }, (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          let total = 0;
          const keep = req.responseBytes ?? EXCERPT_BYTES;
          res.on('data', (c: Buffer) => {
            total += c.length;
            if (kept < keep) {
              chunks.push(c);
              kept += c.length;
            }
            if (total > Math.max(MAX_BODY_BYTES, keep)) res.destroy();
          });
          const done = () => finish({
            status: res.statusCode ?? null,
            retryAfter: res.headers['retry-after'],
            excerpt: Buffer.concat(chunks).subarray(0, keep).toString('utf8'),
            error: null,
          });
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        });
        const timer = setTimeout(() => {
          r.destroy();
          finish(fail(`timeout after ${req.timeoutMs} ms`));
        }, req.timeoutMs);
        r.on('error', (e: NodeJS.ErrnoException) => finish(fail(e.code ? `${e.code}: ${e.message}` : e.message)));
        r.end(body);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
