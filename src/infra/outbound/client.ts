import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { OutboundError, type Outbound, type OutboundRequest, type OutboundResponse } from '../../core/outbound.js';
import { destinationCheck, destinationRule, guardedLookup, refusedError, systemLookup, type Lookup } from './destination.js';

const DEFAULT_MAX_BYTES = 256 * 1024;
/** An idle connection is closed after this long, before a server's keep-alive timeout (node's default: 5 s) can race a reuse. */
const IDLE_MS = 4000;

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

/** Repeated, only the first counts (node:http's rule, which callers were written against); set-cookie is a list; the rest are joined with ", ". */
const FIRST_ONLY = new Set(['content-type', 'content-length', 'user-agent', 'referer', 'host', 'authorization', 'proxy-authorization', 'if-modified-since',
  'if-unmodified-since', 'from', 'location', 'max-forwards', 'retry-after', 'etag', 'last-modified', 'server', 'age', 'expires']);

/** undici's raw header list (name, value, …) as node:http's `headers` object. */
function headersOf(raw: Buffer[]): OutboundResponse['headers'] {
  // No prototype: a response header named `constructor` or `__proto__` is a header like any other.
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const had = headers[name];
    if (had === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (Array.isArray(had)) had.push(value);
    else if (!FIRST_ONLY.has(name)) headers[name] = `${had}, ${value}`;
  }
  return headers;
}

/**
 * One exchange as an undici dispatch handler: the body gathered up to
 * `maxBytes` (past it the connection is dropped, not drained), interim 1xx
 * answers skipped, a deadline and the caller's signal, which cancel it
 * whether or not the request has reached a connection yet. One object per
 * request and no closures: this is the webhook worker's hot path.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private status = 0;
  private headers: OutboundResponse['headers'] = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private abort: ((reason?: Error) => void) | undefined;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly maxBytes: number,
    timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (r: OutboundResponse) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    this.timer = setTimeout(onTimeout, timeoutMs, this, timeoutMs);
    signal?.addEventListener('abort', this, { once: true });
  }

  /** The caller's signal (an EventListener object: no closure per request). */
  handleEvent(): void {
    this.cancel(new OutboundError('aborted', 'the request was cancelled', 'ABORT_ERR'));
  }

  cancel(reason: OutboundError): void {
    this.fail(reason);
    this.abort?.(reason);
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.settled) abort();
    else this.abort = abort;
  }

  onHeaders(status: number, raw: Buffer[]): boolean {
    // A 1xx is an interim answer; the final one follows on the same connection.
    if (status >= 200) {
      this.status = status;
      this.headers = headersOf(raw);
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return false;
    this.size += chunk.length;
    this.chunks.push(chunk);
    if (this.size > this.maxBytes) {
      this.done(true);
      // Dropped rather than read to its end: a body past the cap may never end.
      this.abort?.();
      return false;
    }
    return true;
  }

  onComplete(): void {
    this.done(false);
  }

  onError(err: Error): void {
    this.fail(err instanceof OutboundError ? err : failure(err as NodeJS.ErrnoException));
  }

  private finish(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
    return true;
  }

  private done(truncated: boolean): void {
    if (!this.finish()) return;
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const bytes = truncated ? all.subarray(0, this.maxBytes) : all;
    this.resolve({ status: this.status, headers: this.headers, body: bytes.toString('utf8'), bytes, truncated });
  }

  private fail(err: unknown): void {
    if (this.finish()) this.reject(err);
  }
}

function onTimeout(exchange: Exchange, ms: number): void {
  exchange.cancel(new OutboundError('timeout', `no answer within ${ms} ms`, 'ETIMEDOUT'));
}

/**
 * The one HTTP client for server-side requests: undici's dispatcher, HTTP/1.1
 * with keep-alive connections per origin. Before a request: the URL's host
 * against the destination rule; at connect: every resolved address (the
 * `lookup` hook, which undici hands to net.connect and tls.connect). Redirects
 * are not followed (a dispatch never does; the 3xx is the answer). The whole
 * exchange has a deadline and the body a size cap.
 */
export function createOutbound(opts: OutboundOptions): OutboundClient {
  const rule = destinationRule(opts.allowPrivate);
  const lookupFn = opts.lookup ?? systemLookup;
  const agent = new Agent({
    connections: opts.maxSockets ?? 256,
    keepAliveTimeout: IDLE_MS,
    keepAliveMaxTimeout: IDLE_MS,
    connect: { lookup: guardedLookup(rule, lookupFn) as unknown as LookupFunction },
  });

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
    const dispatch: Dispatcher.DispatchOptions = {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: req.headers ?? {},
      body: req.body ?? null,
    };
    return new Promise((resolve, reject) => {
      const exchange = new Exchange(req.maxBytes ?? DEFAULT_MAX_BYTES, req.timeoutMs, req.signal, resolve, reject);
      try {
        agent.dispatch(dispatch, exchange);
      } catch (e) {
        // A header that would split the request, or another refusal of undici's before it sends anything.
        exchange.onError(e as Error);
      }
    });
  }

  return {
    request,
    check: destinationCheck(rule, lookupFn),
    close() {
      void agent.destroy().catch(() => undefined);
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
