import type { Client } from '../model.js';
import type { ClientStore } from '../ports.js';
import { single, type Params } from '../params.js';
import { invalidRequest } from '../errors.js';
import type { KeyRing } from '../oauth/keys.js';
import { verifyJwt } from '../jwt-verify.js';
import { ID_TOKEN_ALGORITHMS } from './id-token.js';

/** The end-session request could not be honoured; the person sees the message on a page (never redirected: RP-Initiated Logout 1.0 §4). */
const refused = (description: string) => invalidRequest(description, { title: 'This sign-out link is not valid' });

/** What an id_token_hint told us, once its signature and issuer checked out. */
export interface IdTokenHint {
  sub: string;
  aud: string;
  sid: string | undefined;
}

/**
 * Checks that we issued this ID token: signed by a key we still publish,
 * `typ: JWT`, our `iss`. Expiry is not checked: RP-Initiated Logout 1.0 §2
 * asks the OP to accept expired ID tokens as hints.
 */
export async function verifyIdTokenHint(keys: KeyRing, issuer: string, token: string, now: number): Promise<IdTokenHint | undefined> {
  let claims: Record<string, unknown>;
  try {
    ({ claims } = await verifyJwt(token, {
      keys: (header) => keys.publicKey(header.kid),
      issuer,
      typ: 'JWT',
      algorithms: ID_TOKEN_ALGORITHMS,
      requiredClaims: ['sub', 'aud'],
      now,
      allowExpired: true,
    }));
  } catch {
    return undefined;
  }
  if (typeof claims.sub !== 'string' || typeof claims.aud !== 'string') return undefined;
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
export async function parseEndSession(params: Params, deps: { clients: ClientStore; keys: KeyRing; issuer: string; now: number }): Promise<EndSessionRequest> {
  let raw: Record<'hint' | 'clientId' | 'redirect' | 'state', string | undefined>;
  try {
    raw = {
      hint: single(params, 'id_token_hint'),
      clientId: single(params, 'client_id'),
      redirect: single(params, 'post_logout_redirect_uri'),
      state: single(params, 'state'),
    };
  } catch (e) {
    throw refused((e as Error & { description?: string }).description ?? 'a parameter is repeated');
  }
  const hint = raw.hint === undefined ? undefined : await verifyIdTokenHint(deps.keys, deps.issuer, raw.hint, deps.now);
  if (raw.hint !== undefined && !hint) throw refused('the id_token_hint is not an ID token issued by this server');
  if (hint && raw.clientId !== undefined && raw.clientId !== hint.aud) throw refused('client_id does not match the id_token_hint');
  const clientId = hint?.aud ?? raw.clientId;
  const client = clientId !== undefined && clientId.length <= 255 ? await deps.clients.get(clientId) : undefined;
  if (clientId !== undefined && !client) throw refused('unknown client');
  if (raw.redirect !== undefined) {
    if (!client) throw refused('post_logout_redirect_uri needs an id_token_hint or a client_id');
    if (!client.postLogoutRedirectUris.includes(raw.redirect)) throw refused('post_logout_redirect_uri is not registered for this client');
  }
  return { hint, client, postLogoutRedirectUri: raw.redirect, state: raw.state };
}
