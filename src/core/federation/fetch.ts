import { providerFailed } from './errors.js';

/** Replies bigger than this are not user info or tokens; reading stops there. */
const MAX_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;

export interface ProviderReply {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One call to a provider's endpoint: a time limit, a size limit, and a body
 * parsed as JSON or (GitHub's default for tokens) a form. Failing to reach
 * the provider, or a reply that is neither, is a 502 for the person; what the
 * provider actually said is never shown to them.
 */
export async function callProvider(fetchFn: typeof fetch, url: string, init: RequestInit, what: string): Promise<ProviderReply> {
  let res: Response;
  try {
    res = await fetchFn(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    throw providerFailed(`the sign-in provider could not be reached (${what})`);
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_BYTES) throw providerFailed(`the sign-in provider sent too large a reply (${what})`);
  let text: string;
  try {
    text = await readLimited(res);
  } catch {
    throw providerFailed(`the sign-in provider's reply could not be read (${what})`);
  }
  const type = res.headers.get('content-type')?.split(';')[0]!.trim().toLowerCase();
  let body: unknown;
  if (type === 'application/x-www-form-urlencoded') {
    body = Object.fromEntries(new URLSearchParams(text));
  } else {
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      throw providerFailed(`the sign-in provider's reply was not JSON (${what})`);
    }
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw providerFailed(`the sign-in provider's reply was not an object (${what})`);
  return { status: res.status, body: body as Record<string, unknown> };
}

async function readLimited(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_BYTES) throw new Error('too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
