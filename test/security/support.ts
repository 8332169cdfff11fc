/**
 * Shared pieces of the hostile-input and security suites: request builders,
 * RFC-shape assertions. Signing in and authorizing: test/helpers/people.ts and
 * test/helpers/authorize.ts.
 */
import assert from 'node:assert/strict';
import type { TestServer } from '../helpers/server.js';

export const REDIRECT = 'https://app.example.test/callback';
export const FORM = 'application/x-www-form-urlencoded';

export type Fields = Record<string, string | string[]>;

/** A form body; an array value repeats the parameter (RFC 6749 §3.1 forbids that). */
export function formBody(fields: Fields): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
  return q.toString();
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** POSTs a form (or a raw body with its own content type) to `path`. */
export function post(base: string, path: string, body: Fields | string | Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  const raw = typeof body === 'string' || body instanceof Uint8Array;
  return fetch(new URL(path, base), {
    method: 'POST',
    headers: raw ? headers : { 'content-type': FORM, ...headers },
    body: raw ? body : formBody(body),
    redirect: 'manual',
  });
}

export function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL(path, base), { headers, redirect: 'manual' });
}

/** An RFC 6749 §5.2 error: JSON `{error, error_description?}`, uncacheable, with the expected status. */
export async function expectOAuthError(res: Response, status: number, error?: string): Promise<{ error: string; error_description?: string }> {
  const text = await res.text();
  assert.equal(res.status, status, `status ${res.status} (wanted ${status}): ${text.slice(0, 300)}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as { error: unknown; error_description?: unknown };
  assert.equal(typeof body.error, 'string');
  assert.match(body.error as string, /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/, 'RFC 6749 §5.2 error charset');
  if (body.error_description !== undefined) assert.equal(typeof body.error_description, 'string');
  if (error) assert.equal(body.error, error, `error ${String(body.error)}: ${String(body.error_description)}`);
  assert.match(res.headers.get('cache-control') ?? '', /no-store/);
  return body as { error: string; error_description?: string };
}

/** A fatal authorization-endpoint error: an HTML page and no redirect (RFC 6749 §4.1.2.1). */
export async function expectErrorPage(res: Response, status = 400): Promise<string> {
  const text = await res.text();
  assert.equal(res.status, status, `status ${res.status} (wanted ${status}): ${text.slice(0, 300)}`);
  assert.equal(res.headers.get('location'), null, 'an error page never redirects');
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(text, /<!doctype html>/i);
  return text;
}

/** An error sent back to the client's redirect URI with state and iss (RFC 6749 §4.1.2.1, RFC 9207). */
export function expectErrorRedirect(
  res: Response,
  opts: { redirectUri: string; issuer: string; error: string; state?: string | null; fragment?: boolean; status?: number },
): URL {
  assert.equal(res.status, opts.status ?? 302, `status ${res.status}`);
  const loc = new URL(res.headers.get('location') ?? 'missing:');
  assert.equal(`${loc.origin}${loc.pathname}`, opts.redirectUri);
  const params = opts.fragment ? new URLSearchParams(loc.hash.slice(1)) : loc.searchParams;
  assert.equal(params.get('error'), opts.error, `error_description: ${params.get('error_description')}`);
  assert.equal(params.get('iss'), opts.issuer);
  if (opts.state !== undefined) assert.equal(params.get('state'), opts.state);
  return loc;
}

/** Introspects `token` as a client allowed to (RFC 7662). */
export async function introspect(server: TestServer, token: string, caller: { id: string; secret: string | undefined }): Promise<Record<string, unknown>> {
  const res = await post(server.url, '/oauth/check_token', { token }, { authorization: basic(caller.id, caller.secret!) });
  assert.equal(res.status, 200);
  return (await res.json()) as Record<string, unknown>;
}
