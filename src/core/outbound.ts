/**
 * Server-side HTTP requests as the core sees them: webhooks, back-channel
 * logout, sign-in providers, JWKS and introspection all go through one
 * implementation (src/infra/outbound/), which refuses reserved addresses at
 * connect time, follows no redirect, and bounds time and size. The core gets
 * it injected as these function types.
 */
export interface OutboundRequest {
  url: string;
  /** Default GET. */
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The whole exchange, connecting included, must end within this. */
  timeoutMs: number;
  /** Reading stops after this many bytes of body (default 256 KiB); `truncated` says so. */
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  /** A 3xx is answered as it is: redirects are never followed. */
  status: number;
  /** Lower-case names, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body's bytes (files fetched by URL); `body` is their UTF-8 reading. */
  bytes?: Buffer;
  /** The body was longer than `maxBytes`; `body` is its start. */
  truncated: boolean;
}

/** Why no answer came. */
export type OutboundFailure = 'refused' | 'timeout' | 'unresolvable' | 'connection' | 'aborted' | 'invalid_url';

/** A failed outbound request: recorded with a delivery attempt or turned into the caller's GatehouseError, never an answer itself. */
export class OutboundError extends Error {
  override name = 'OutboundError';
  /** `code` is node's (ECONNREFUSED, ENOTFOUND, …) when there is one; EADDRNOTAVAIL for a refused address. */
  constructor(readonly kind: OutboundFailure, message: string, readonly code?: string) {
    super(message);
  }
}

/** Rejects with an `OutboundError` when no HTTP answer came. */
export type OutboundHttp = (req: OutboundRequest) => Promise<OutboundResponse>;

/** Why a destination may not be used. */
export type DestinationRefusal =
  | { reason: 'address'; host: string; address: string; range: string }
  | { reason: 'name'; host: string }
  | { reason: 'unresolvable'; host: string }
  | { reason: 'invalid' };

/**
 * The registration-time check of a URL's host (setWebhook, webhook
 * endpoints): the same rule as at connect time. With `resolve`, a host name
 * is looked up and every address checked (Telegram's setWebhook does this);
 * without, only the name is judged, as DNS may be set up later.
 */
export type DestinationCheck = (url: string | URL, opts?: { resolve?: boolean }) => Promise<DestinationRefusal | undefined>;

/** The outbound module a process runs with: requests and the matching URL check. */
export interface Outbound {
  request: OutboundHttp;
  check: DestinationCheck;
}

const DELTA_SECONDS = /^\d+$/;

/**
 * RFC 9110 §10.2.3 Retry-After: delay-seconds or an HTTP-date (IMF-fixdate,
 * or the obsolete forms Date.parse reads, §5.6.7). Milliseconds to wait from
 * `now`, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | readonly string[] | undefined, now: number): number | undefined {
  const v = (typeof value === 'string' ? value : value?.[0])?.trim();
  if (!v) return undefined;
  if (DELTA_SECONDS.test(v)) return Number(v) * 1000;
  // An HTTP-date always names the weekday or month in letters; bare numbers Date.parse would guess at are not dates.
  if (!/[A-Za-z]/.test(v)) return undefined;
  // asctime() carries no zone; every HTTP-date is in GMT.
  const at = Date.parse(/\b(GMT|UTC)\b/i.test(v) ? v : `${v} GMT`);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
