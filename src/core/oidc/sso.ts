import { sha256 } from '../crypto.js';
import type { Session } from '../model.js';
import type { Clock, Storage } from '../ports.js';
import type { SessionManager } from '../sessions.js';
import type { AuthMethod } from './acr.js';
import type { OAuthConfig } from '../oauth/config.js';
import type { KeyRing } from '../oauth/keys.js';
import { recordEvent } from '../notify/record.js';
import { deliverLogout, logoutToken, type LogoutDelivery, type LogoutSender } from './backchannel.js';

/** Back-Channel Logout 1.0 §2.7 keeps these alive past the session. */
const OFFLINE_ACCESS = 'offline_access';

/**
 * The public id of a session (OpenID Connect `sid`). Sessions from before
 * 0004_oidc have none stored: one is derived from the stored hash, which
 * reveals nothing about the cookie.
 */
export function sessionSid(session: Session): string {
  return session.sid ?? sha256(`sid:${session.idHash}`).slice(0, 22);
}

export interface SingleSignOnDeps {
  storage: Storage;
  sessions: SessionManager;
  keys: KeyRing;
  config: OAuthConfig;
  clock: Clock;
  /** Delivers logout tokens (outboundLogoutSender over the guarded outbound client). */
  send: LogoutSender;
  /** How long each application gets to answer a logout token. */
  logoutTimeoutMs?: number;
}

/**
 * Single sign-on and single logout. A session at Gatehouse signs the person
 * in to every application that asks (the session store is shared: database
 * or Redis); each code issued records which session signed in to which
 * application, so that when the session ends every one of them hears of it
 * (OpenID Connect Back-Channel Logout 1.0) and the refresh tokens that were
 * tied to it end too (§2.7).
 */
export class SingleSignOn {
  private readonly send: LogoutSender;
  private readonly timeoutMs: number;

  constructor(private readonly deps: SingleSignOnDeps) {
    this.send = deps.send;
    this.timeoutMs = deps.logoutTimeoutMs ?? 3000;
  }

  /**
   * The person proved who they are at the login page. The cookie is always
   * new (session fixation); the same person keeps the session's `sid`, so
   * applications they are signed in to still match it. A different person
   * ends the previous session, and its applications are told. With
   * `signedIn`, user.login.succeeded is recorded here, once the session
   * exists, carrying its `sid`: the alert's "Sign out that session" button
   * names exactly this session (docs/events.md). `amr`: how the person proved it
   * (RFC 8176 methods; the session's level follows, src/core/oidc/acr.ts).
   */
  async signIn(previousCookie: string | undefined, userId: string, userAgent?: string | null, signedIn?: { username: string; ip: string }, amr?: readonly AuthMethod[]): Promise<{ id: string; session: Session; ended: LogoutDelivery[] }> {
    const { sessions } = this.deps;
    const previous = await sessions.resolve(previousCookie);
    await sessions.destroy(previousCookie);
    const same = previous?.userId === userId;
    const { id, session } = await sessions.create(userId, { sid: same ? sessionSid(previous) : undefined, userAgent, ...(amr ? { amr } : {}) });
    if (signedIn) {
      await recordEvent({ events: this.deps.storage.events }, 'user.login.succeeded',
        { user_id: userId, username: signedIn.username, ip: signedIn.ip, sid: sessionSid(session) }, this.deps.clock.now());
    }
    const ended = previous && !same ? await this.ended(previous) : [];
    return { id, session, ended };
  }

  /** Ends a session (sign-out, RP-initiated logout, the account page) and tells its applications. */
  async signOut(session: Session): Promise<LogoutDelivery[]> {
    await this.deps.storage.sessions.delete(session.idHash);
    return this.ended(session);
  }

  /** The account page: ends one of the person's own sessions, named by its `sid`. */
  async revokeSession(userId: string, sid: string): Promise<LogoutDelivery[] | undefined> {
    const sessions = await this.deps.storage.sessions.listForUser(userId, this.deps.clock.now());
    const target = sessions.find((s) => sessionSid(s) === sid);
    return target ? this.signOut(target) : undefined;
  }

  private async ended(session: Session): Promise<LogoutDelivery[]> {
    const { storage, clock, keys, config } = this.deps;
    const now = clock.now();
    const sid = sessionSid(session);
    // Atomic: of two concurrent sign-outs of one session, only one notifies.
    const signIns = await storage.signIns.endSession(sid, now);
    for (const s of signIns) {
      const family = await storage.tokens.getFamily(s.familyId);
      if (family && family.revokedAt === null && !family.scope.includes(OFFLINE_ACCESS)) await storage.tokens.revokeFamily(family.id, now);
    }
    const clientIds = [...new Set(signIns.map((s) => s.clientId))];
    const clients = (await Promise.all(clientIds.map((id) => storage.clients.get(id)))).filter((c) => c?.backchannelLogoutUri);
    return Promise.all(clients.map((client) =>
      deliverLogout(this.send, client!, logoutToken(keys, config.issuer, client!, { sub: session.userId, sid }, now), this.timeoutMs)));
  }
}
