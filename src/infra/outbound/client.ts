import type { LookupFunction } from 'node:net';
import { OutboundError, type Outbound, type OutboundRequest, type OutboundResponse } from '../../core/outbound.js';
import { destinationCheck, destinationRule, guardedLookup, refusedError, systemLookup, type Lookup } from './destination.js';
import { Http1Pool } from './http1.js';

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
 * The one HTTP client for server-side requests: HTTP/1.1 with keep-alive
 * connections per origin (src/infra/outbound/http1.ts). Before a request:
 * the URL's host against the destination rule; at connect: every resolved
 * address (the `lookup` hook). Redirects are not followed (the 3xx is the
 * answer). The whole exchange has a deadline and the body a size cap.
 */
export function createOutbound(opts: OutboundOptions): OutboundClient {
  const rule = destinationRule(opts.allowPrivate);
  const lookupFn = opts.lookup ?? systemLookup;
  const connectLookup = guardedLookup(rule, lookupFn);
  const pool = new Http1Pool(connectLookup as unknown as LookupFunction, opts.maxSockets ?? 256);

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
    if (req.signal?.aborted) return Promise.reject(new OutboundError('aborted', 'the request was cancelled', 'ABORT_ERR'));
    const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
    const exchange = pool.request({ url, method: req.method ?? 'GET', headers: req.headers ?? {}, body: req.body, maxBytes });
    const timer = setTimeout(() => exchange.cancel(new OutboundError('timeout', `no answer within ${req.timeoutMs} ms`, 'ETIMEDOUT')), req.timeoutMs);
    const onAbort = () => exchange.cancel(new OutboundError('aborted', 'the request was cancelled', 'ABORT_ERR'));
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    };
    return exchange.response.then((r) => {
      settle();
      return { status: r.status, headers: r.headers, body: r.bytes.toString('utf8'), bytes: r.bytes, truncated: r.truncated };
    }, (e: unknown) => {
      settle();
      throw e instanceof OutboundError ? e : failure(e as NodeJS.ErrnoException);
    });
  }

  return {
    request,
    check: destinationCheck(rule, lookupFn),
    close() {
      pool.close();
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
