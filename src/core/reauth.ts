import type { Session, User } from './model.js';
import type { Clock } from './ports.js';
import type { CodeCheck, SecondFactors } from './mfa/factors.js';
import { recentlyVerified, type SessionManager } from './sessions.js';

/** What a person gives to prove it again: the password, or a code of a second factor (TOTP or recovery code). */
export interface ReauthProof {
  password?: string | undefined;
  code?: string | undefined;
}

export interface ReauthDeps {
  sessions: SessionManager;
  factors: SecondFactors;
  clock: Clock;
  /** GATEHOUSE_REAUTH_WINDOW, in milliseconds. */
  windowMs: number;
}

/**
 * Sudo mode (docs/security.md, Re-authentication): a session cookie alone
 * does not make a lasting change to how the account is protected. Every
 * sensitive change (second factors, recovery codes, the chat link and
 * approval in chat, and the account's password, e-mail and deletion) needs
 * the password or a second factor given within the window: at sign-in, or
 * again through `prove`. The one check every such route passes through
 * (src/http/auth/reauth.ts).
 */
export class Reauthentication {
  constructor(private readonly deps: ReauthDeps) {}

  get windowMs(): number {
    return this.deps.windowMs;
  }

  /** The session's person gave the password or a second factor within the window. */
  fresh(session: Session): boolean {
    return recentlyVerified(session, this.deps.clock.now(), this.deps.windowMs);
  }

  /**
   * Checks the proof (counted by the second factors' throttle, per account and
   * per address, like the second step) and, when right, opens the window for
   * this session from now.
   */
  async prove(session: Session, user: User, proof: ReauthProof, address: string): Promise<CodeCheck> {
    const check = await this.deps.factors.proves(user, proof, address);
    if (check.ok) await this.deps.sessions.markVerified(session);
    return check;
  }
}
