import { createHmac } from 'node:crypto';
import { randomToken, safeEqual, sha256 } from './crypto.js';
import type { Session } from './model.js';
import type { Clock, SessionStore } from './ports.js';

/** How often a session's last use is written at most (SessionManager.resolve). */
export const TOUCH_INTERVAL_MS = 60_000;

/**
 * Browser sessions at the authorization server (docs/security.md, Session
 * fixation: the cookie carries only a random identifier). The store keeps its hash, so a leaked table
 * cannot be replayed as cookies.
 */
export class SessionManager {
  constructor(
    private readonly store: SessionStore,
    private readonly clock: Clock,
    readonly ttlMs: number,
  ) {}

  /**
   * A fresh identifier on every sign-in, so a planted cookie is never promoted
   * (session fixation). `sid` carries the public session id over when the same
   * person signs in again (src/core/oidc/sso.ts); otherwise a new one is drawn.
   */
  async create(userId: string, opts: { sid?: string; userAgent?: string | null; ip?: string | null; amr?: readonly string[] } = {}): Promise<{ id: string; session: Session }> {
    const id = randomToken();
    const now = this.clock.now();
    const session: Session = {
      idHash: sha256(id), userId, authTime: now, createdAt: now, expiresAt: now + this.ttlMs,
      sid: opts.sid ?? randomToken(16), userAgent: opts.userAgent?.slice(0, 256) ?? null,
      ...(opts.ip ? { ip: opts.ip.slice(0, 64), lastUsedAt: now } : {}),
      ...(opts.amr?.length ? { amr: [...new Set(opts.amr)] } : {}),
    };
    await this.store.create(session);
    return { id, session };
  }

  /**
   * The session the cookie names. With `use` (a request the person made), its
   * last use and address are recorded, at most once a minute per session so
   * that a busy browser does not add a write to every request.
   */
  async resolve(id: string | undefined, use?: { ip: string | null }): Promise<Session | undefined> {
    if (!id || id.length > 128) return undefined;
    const now = this.clock.now();
    const session = await this.store.get(sha256(id), now);
    if (!session || !use) return session;
    const ip = use.ip?.slice(0, 64) ?? null;
    const stale = session.lastUsedAt == null || session.lastUsedAt < now - TOUCH_INTERVAL_MS;
    if (stale && (await this.store.touch(session.idHash, { at: now, ip }, now - TOUCH_INTERVAL_MS))) return { ...session, lastUsedAt: now, ip };
    return session;
  }

  /** The person gave the password or a second factor to this session just now (sudo mode, src/core/reauth.ts). */
  async markVerified(session: Session): Promise<boolean> {
    return this.store.markVerified(session.idHash, this.clock.now());
  }

  async destroy(id: string | undefined): Promise<void> {
    if (id) await this.store.delete(sha256(id));
  }
}

/**
 * Whether the session's person gave the password or a second factor (at
 * sign-in, or again since) less than `windowMs` ago: "sudo mode" for
 * sensitive changes (src/core/reauth.ts).
 */
export function recentlyVerified(session: Session, now: number, windowMs: number): boolean {
  const at = Math.max(session.verifiedAt ?? 0, session.authTime);
  // A time ahead of `now` (another process's clock) counts as now, but not one a whole window ahead.
  return now - at < windowMs && at - now < windowMs;
}

/**
 * CSRF token bound to a secret the attacker cannot read (the session id, or
 * the pre-login CSRF cookie): HMAC, so the form never carries the secret.
 */
export function csrfToken(secret: string, purpose: string): string {
  return createHmac('sha256', secret).update(purpose).digest('base64url');
}

export function csrfValid(secret: string | undefined, purpose: string, presented: unknown): boolean {
  return typeof secret === 'string' && secret.length > 0 && typeof presented === 'string' && safeEqual(csrfToken(secret, purpose), presented);
}
