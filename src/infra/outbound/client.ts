import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { OutboundError, type Outbound, type OutboundRequest, type OutboundResponse } from '../../core/outbound.js';
import { destinationCheck, destinationRule, guardedLookup, refusedError, systemLookup, type Lookup } from './destination.js';

const DEFAULT_MAX_BYTES = 256 * 1024;

export interface OutboundOptions {
  /** Lifts the private-address and local-name refusals (see destinationRule). */
  allowPrivate: boolean;
  /** Keep-alive connections per origin. */
  maxSockets?: number;
  /** The resolver; tests inject one that answers as they like (DNS rebinding). */
  lookup?: Lookup;
}

export interface OutboundClient extends Outbound {
  /** Drops the kept-alive connections. */
  close(): void;
}

function failure(e: NodeJS.ErrnoException): OutboundError {
  const code = e.code;
  if (code === 'EADDRNOTAVAIL') return new OutboundError('refused', e.message, code);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return new OutboundError('unresolvable', e.message, code);
  if (e.name === 'AbortError' || code === 'ABORT_ERR') return new OutboundError('aborted', 'the request was cancelled', code);
  return new OutboundError('connection', code ? `${code}: ${e.message}` : e.message, code);
}

/**
 * The one HTTP client for server-side requests, over node:http(s) with
 * keep-alive. Before a request: the URL's host against the destination rule;
 * at connect: every resolved address (the `lookup` hook). Redirects are not
 * followed (node:http never does; the 3xx is the answer). The whole exchange
 * has a deadline and the body a size cap.
 */
export function createOutbound(opts: OutboundOptions): OutboundClient {
  const rule = destinationRule(opts.allowPrivate);
  const lookupFn = opts.lookup ?? systemLookup;
  const connectLookup = guardedLookup(rule, lookupFn);
  const agentOpts = { keepAlive: true, maxSockets: opts.maxSockets ?? 256 };
  const agents = { http: new http.Agent(agentOpts), https: new https.Agent(agentOpts) };

  function request(req: OutboundRequest): Promise<OutboundResponse> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return Promise.reject(new OutboundError('invalid_url', 'invalid url'));
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new OutboundError('invalid_url', 'only http and https URLs'));
    // An IP literal never reaches the lookup hook: judge it here (a host name is judged here and at connect).
    const refusal = rule.screen(url.hostname);
    if (refusal) return Promise.reject(failure(refusedError(refusal)));
    const secure = url.protocol === 'https:';
    const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
    const body = req.body === undefined ? undefined : Buffer.from(req.body);

    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        fn();
      };
      const r = (secure ? https : http).request(url, {
        method: req.method ?? 'GET',
        agent: secure ? agents.https : agents.http,
        headers: { ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        lookup: connectLookup as unknown as LookupFunction,
        ...(req.signal ? { signal: req.signal } : {}),
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const done = () => settle(() => {
          const bytes = Buffer.concat(chunks).subarray(0, maxBytes);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes.toString('utf8'), bytes, truncated });
        });
        res.on('data', (c: Buffer) => {
          if (truncated) return;
          size += c.length;
          chunks.push(c);
          if (size > maxBytes) {
            // Stop reading: the socket is dropped rather than drained forever.
            truncated = true;
            res.destroy();
            done();
          }
        });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      const timer = setTimeout(() => {
        r.destroy();
        settle(() => reject(new OutboundError('timeout', `no answer within ${req.timeoutMs} ms`, 'ETIMEDOUT')));
      }, req.timeoutMs);
      r.on('error', (e: NodeJS.ErrnoException) => settle(() => reject(failure(e))));
      r.end(body);
    });
  }

  return {
    request,
    check: destinationCheck(rule, lookupFn),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/**
 * The clients a process uses, by who chose the destination; this is where
 * GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS takes effect. `registered`: URLs that
 * users, bots and clients registered (webhooks, back-channel logout), where
 * reserved addresses are refused unless the setting allows them.
 * `configured`: destinations the operator named (sign-in providers, the
 * authorization server's JWKS and introspection, the notification Bot API),
 * which may well be on a private network.
 */
export function outboundClients(config: { allowPrivateWebhooks: boolean }, lookup?: Lookup): { registered: OutboundClient; configured: OutboundClient } {
  const extra = lookup ? { lookup } : {};
  return {
    registered: createOutbound({ allowPrivate: config.allowPrivateWebhooks, ...extra }),
    configured: createOutbound({ allowPrivate: true, ...extra }),
  };
}
