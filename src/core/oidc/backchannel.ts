import { randomUUID } from 'node:crypto';
import type { Client } from '../model.js';
import type { KeyRing } from '../oauth/keys.js';
import type { OutboundError, OutboundHttp } from '../outbound.js';

/** OpenID Connect Back-Channel Logout 1.0 §2.4: the event that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** §2.4 recommends explicit typing, so a logout token can never pass for an ID token. */
export const LOGOUT_TOKEN_TYP = 'logout+jwt';
/** Logout tokens are acted on at once; two minutes covers clock skew. */
const LOGOUT_TOKEN_TTL_S = 120;

/** POSTs a form body to a URL; answers the HTTP status. Injected so tests and embedders can replace it. */
export type LogoutSender = (url: string, body: URLSearchParams, timeoutMs: number) => Promise<number>;

/** §2.5: a plain form POST; redirects are not followed (a 3xx is a failure). */
export function outboundLogoutSender(http: OutboundHttp): LogoutSender {
  return async (url, body, timeoutMs) => {
    const res = await http({
      url, method: 'POST', timeoutMs, maxBytes: 4096, body: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'cache-control': 'no-cache' },
    });
    return res.status;
  };
}

export interface LogoutDelivery {
  clientId: string;
  ok: boolean;
  /** The client's HTTP status, when it answered. */
  status?: number;
  error?: string;
}

/**
 * §2.4 logout token: `iss`, `aud`, `iat`, `exp`, `jti`, `events`, and both
 * `sub` and `sid` so a client can match either; never a `nonce`.
 */
export function logoutToken(keys: KeyRing, issuer: string, client: Client, who: { sub: string; sid: string }, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  return keys.sign({
    iss: issuer, aud: client.id, iat, exp: iat + LOGOUT_TOKEN_TTL_S, jti: randomUUID(),
    sub: who.sub, sid: who.sid, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  }, LOGOUT_TOKEN_TYP);
}

/** §2.5, §2.8: any 2xx is success; anything else (or no answer) is reported, never thrown. */
export async function deliverLogout(send: LogoutSender, client: Client, token: string, timeoutMs: number): Promise<LogoutDelivery> {
  try {
    const status = await send(client.backchannelLogoutUri!, new URLSearchParams({ logout_token: token }), timeoutMs);
    return { clientId: client.id, ok: status >= 200 && status < 300, status };
  } catch (e) {
    return { clientId: client.id, ok: false, error: (e as OutboundError).kind === 'timeout' ? 'timed out' : (e as Error).message };
  }
}
