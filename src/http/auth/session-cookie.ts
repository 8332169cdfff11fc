import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Gatehouse } from '../../gatehouse.js';
import { accountUsable } from '../../core/account-lock.js';
import type { LogoutDelivery } from '../../core/oidc/backchannel.js';

const secureOrigin = (gh: Gatehouse) => gh.oauth.issuer.startsWith('https:');

/**
 * Under https the cookies of the whole origin carry the `__Host-` prefix
 * (RFC 6265bis §4.1.3.2): a browser keeps such a cookie only when it is
 * Secure, has Path=/ and no Domain, so a sibling subdomain or a plain-http
 * response cannot plant or overwrite it (session fixation by cookie
 * tossing). Over plain http (development) the prefix would be refused, so
 * the plain name stays.
 */
const originCookie = (gh: Gatehouse, name: string) => (secureOrigin(gh) ? `__Host-${name}` : name);
export const sessionCookie = (gh: Gatehouse) => originCookie(gh, 'gh_session');
export const csrfCookie = (gh: Gatehouse) => originCookie(gh, 'gh_csrf');

/** HttpOnly, SameSite=Lax, and Secure whenever the server is reached over https. */
export function cookieOptions(gh: Gatehouse, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: secureOrigin(gh),
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

export async function currentSession(gh: Gatehouse, req: FastifyRequest) {
  const id = req.cookies[sessionCookie(gh)];
  // A use of the session: its time and address, for the account page.
  const session = await gh.sessions.resolve(id, { ip: req.ip });
  if (!session || !id) return undefined;
  const user = await gh.storage.users.get(session.userId);
  // A locked account's sessions are refused on use, wherever they live (src/core/account-lock.ts).
  return user && accountUsable(user) ? { id, session, user } : undefined;
}

export function clearSession(gh: Gatehouse, reply: FastifyReply): void {
  reply.clearCookie(sessionCookie(gh), cookieOptions(gh));
}

/** Back-channel logout notifications an application did not accept: logged, never shown to the person. */
export function logUndelivered(req: FastifyRequest, deliveries: LogoutDelivery[]): void {
  for (const d of deliveries) {
    if (!d.ok) req.log.warn({ client_id: d.clientId, status: d.status, error: d.error }, 'back-channel logout not accepted');
  }
}

/**
 * Where to go after sign-in. Only a path on this server is accepted (no
 * scheme, no `//host`, no backslash tricks), so the parameter cannot be used
 * as an open redirector (RFC 9700 §4.11.2).
 */
export function safeReturnTo(gh: Gatehouse, value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || /[\\\x00-\x1f]/.test(value)) return '/';
  try {
    const base = new URL(gh.oauth.issuer);
    const u = new URL(value, base);
    const path = `${u.pathname}${u.search}`;
    // Dot segments can collapse into a network-path reference: `/.//evil.example` parses to `//evil.example`.
    return u.origin === base.origin && !path.startsWith('//') ? path : '/';
  } catch {
    return '/';
  }
}
