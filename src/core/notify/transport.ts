import { OutboundError, type OutboundHttp } from '../outbound.js';

/** One HTTP POST a channel makes. */
export interface HttpPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** How much of the answer to keep (default 2 KB: the delivery log's excerpt). */
  responseBytes?: number;
  signal?: AbortSignal;
}

export interface HttpAnswer {
  /** null when no response came (connection refused, timeout, refused address). */
  status: number | null;
  retryAfter: string | undefined;
  /** The start of the response body (the delivery log keeps it). */
  excerpt: string;
  error: string | null;
}

export interface Transport {
  post(req: HttpPost): Promise<HttpAnswer>;
}

const EXCERPT_BYTES = 2048;
/** Answers up to this size are read to the end, so the kept-alive connection can be used again. */
const DRAIN_BYTES = 256 * 1024;

/** The outbox's view of the outbound client: every failure becomes an answer the delivery log records. */
export function notifyTransport(http: OutboundHttp): Transport {
  return {
    async post(req) {
      try {
        const res = await http({
          url: req.url, method: 'POST', headers: req.headers, body: req.body, timeoutMs: req.timeoutMs,
          maxBytes: Math.max(DRAIN_BYTES, req.responseBytes ?? 0), ...(req.signal ? { signal: req.signal } : {}),
        });
        const retryAfter = res.headers['retry-after'];
        return { status: res.status, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, excerpt: Buffer.from(res.body).subarray(0, req.responseBytes ?? EXCERPT_BYTES).toString('utf8'), error: null };
      } catch (e) {
        return { status: null, retryAfter: undefined, excerpt: '', error: e instanceof OutboundError ? e.message : String(e) };
      }
    },
  };
}
