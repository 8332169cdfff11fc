import type { OutboundHttp, OutboundRequest, OutboundResponse } from '../outbound.js';
import { providerFailed } from './errors.js';

/** Replies bigger than this are not user info or tokens; reading stops there. */
const MAX_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;

export interface ProviderReply {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One call to a provider's endpoint: a time limit, a size limit, no
 * redirects, and a body parsed as JSON or (GitHub's default for tokens) a
 * form. Failing to reach the provider, or a reply that is neither, is a 502
 * for the person; what the provider actually said is never shown to them.
 */
export async function callProvider(http: OutboundHttp, url: string, init: Pick<OutboundRequest, 'method' | 'headers' | 'body'>, what: string): Promise<ProviderReply> {
  let res: OutboundResponse;
  try {
    res = await http({ ...init, url, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES });
  } catch {
    throw providerFailed(`the sign-in provider could not be reached (${what})`);
  }
  // A provider's endpoints answer where they are; a redirect is not followed (it could lead anywhere).
  if (res.status >= 300 && res.status < 400) throw providerFailed(`the sign-in provider could not be reached (${what})`);
  if (res.truncated) throw providerFailed(`the sign-in provider sent too large a reply (${what})`);
  const rawType = res.headers['content-type'];
  const type = (Array.isArray(rawType) ? rawType[0] : rawType)?.split(';')[0]!.trim().toLowerCase();
  let body: unknown;
  if (type === 'application/x-www-form-urlencoded') {
    body = Object.fromEntries(new URLSearchParams(res.body));
  } else {
    try {
      body = res.body ? JSON.parse(res.body) : {};
    } catch {
      throw providerFailed(`the sign-in provider's reply was not JSON (${what})`);
    }
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw providerFailed(`the sign-in provider's reply was not an object (${what})`);
  return { status: res.status, body: body as Record<string, unknown> };
}
