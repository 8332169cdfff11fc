import { createPublicKey, verify } from 'node:crypto';
import type { Client } from '../model.js';
import type { ClientStore } from '../ports.js';
import { single, type Params } from '../params.js';
import type { KeyRing } from '../oauth/keys.js';

/** The end-session request could not be honoured; the person sees the message (never redirected: RP-Initiated Logout 1.0 §4). */
export class EndSessionError extends Error {
  override name = 'EndSessionError';
}

/** What an id_token_hint told us, once its signature and issuer checked out. */
export interface IdTokenHint {
  sub: string;
  aud: string;
  sid: string | undefined;
}

const decodePart = (part: string): Record<string, unknown> | undefined => {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Checks that we issued this ID token: ES256 signature by a key we still
 * publish, `typ: JWT`, our `iss`. Expiry is not checked: RP-Initiated Logout
 * 1.0 §2 asks the OP to accept expired ID tokens as hints.
 */
export function verifyIdTokenHint(keys: KeyRing, issuer: string, token: string): IdTokenHint | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 8192) return undefined;
  const header = decodePart(parts[0]!);
  const claims = decodePart(parts[1]!);
  if (!header || !claims || header.alg !== 'ES256' || header.typ !== 'JWT' || typeof header.kid !== 'string') return undefined;
  const jwk = keys.jwks().keys.find((k) => k.kid === header.kid);
  if (!jwk) return undefined;
  const signed = verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), {
    key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363',
  }, Buffer.from(parts[2]!, 'base64url'));
  if (!signed || claims.iss !== issuer || typeof claims.sub !== 'string' || typeof claims.aud !== 'string') return undefined;
  return { sub: claims.sub, aud: claims.aud, sid: typeof claims.sid === 'string' ? claims.sid : undefined };
}

export interface EndSessionRequest {
  hint: IdTokenHint | undefined;
  /** The client named by the hint's `aud` or by `client_id`. */
  client: Client | undefined;
  /** Registered for that client, exactly as sent; only then do we redirect. */
  postLogoutRedirectUri: string | undefined;
  state: string | undefined;
}

/**
 * OpenID Connect RP-Initiated Logout 1.0 §2, §3: `id_token_hint`,
 * `client_id`, `post_logout_redirect_uri` (compared as an exact string with
 * the client's registered ones) and `state`.
 */
export async function parseEndSession(params: Params, deps: { clients: ClientStore; keys: KeyRing; issuer: string }): Promise<EndSessionRequest> {
  let raw: Record<'hint' | 'clientId' | 'redirect' | 'state', string | undefined>;
  try {
    raw = {
      hint: single(params, 'id_token_hint'),
      clientId: single(params, 'client_id'),
      redirect: single(params, 'post_logout_redirect_uri'),
      state: single(params, 'state'),
    };
  } catch (e) {
    throw new EndSessionError((e as Error & { description?: string }).description ?? 'a parameter is repeated');
  }
  const hint = raw.hint === undefined ? undefined : verifyIdTokenHint(deps.keys, deps.issuer, raw.hint);
  if (raw.hint !== undefined && !hint) throw new EndSessionError('the id_token_hint is not an ID token issued by this server');
  if (hint && raw.clientId !== undefined && raw.clientId !== hint.aud) throw new EndSessionError('client_id does not match the id_token_hint');
  const clientId = hint?.aud ?? raw.clientId;
  const client = clientId !== undefined && clientId.length <= 255 ? await deps.clients.get(clientId) : undefined;
  if (clientId !== undefined && !client) throw new EndSessionError('unknown client');
  if (raw.redirect !== undefined) {
    if (!client) throw new EndSessionError('post_logout_redirect_uri needs an id_token_hint or a client_id');
    if (!client.postLogoutRedirectUris.includes(raw.redirect)) throw new EndSessionError('post_logout_redirect_uri is not registered for this client');
  }
  return { hint, client, postLogoutRedirectUri: raw.redirect, state: raw.state };
}
