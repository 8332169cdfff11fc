/**
 * What single sign-on remembers beyond the session itself: which
 * applications a session signed in to. One row per authorization code issued
 * (keyed by the token family the code starts), so that
 * - single logout knows whom to tell (OpenID Connect Back-Channel Logout 1.0 §2.7),
 * - an ID token issued on refresh repeats the original `auth_time` and `sid`
 *   (OpenID Connect Core §12.2).
 */
export interface SignIn {
  familyId: string;
  /** The session's public id (OpenID Connect `sid`). */
  sid: string;
  clientId: string;
  userId: string;
  /** When the person last authenticated in that session, Unix milliseconds. */
  authTime: number;
  createdAt: number;
  /** Set when the session ended (sign-out, revoked on the account page). */
  endedAt: number | null;
  /** The OpenID Connect `claims` request of the authorization (src/core/oidc/claims-request.ts, stored form). */
  claims?: string | null;
  /** How the session had authenticated (RFC 8176 methods; src/core/oidc/acr.ts); absent from before 0033. */
  amr?: string[];
}

export interface SignInStore {
  record(signIn: SignIn): Promise<void>;
  byFamily(familyId: string): Promise<SignIn | undefined>;
  /** Sign-ins of a session that has not ended, oldest first. */
  forSession(sid: string): Promise<SignIn[]>;
  /** Marks every sign-in of the session ended; returns those it marked (atomic: a second call gets none). */
  endSession(sid: string, now: number): Promise<SignIn[]>;
  /**
   * Deletes sign-ins recorded before `before` (the server passes now minus
   * the refresh token lifetime); returns how many. Sessions that expire by
   * themselves never mark theirs ended, so age is what bounds the table.
   */
  purge(before: number): Promise<number>;
}
