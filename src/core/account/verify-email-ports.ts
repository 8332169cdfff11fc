/** A pending e-mail verification link (src/core/account/verify-email.ts). Times are Unix milliseconds. */
export interface EmailVerification {
  /** SHA-256 (hex) of the token the link carries; the token itself is never stored. */
  tokenHash: string;
  userId: string;
  /** The exact address the link confirms (a new one, for a change of address). */
  email: string;
  createdAt: number;
  expiresAt: number;
}

export interface EmailVerificationStore {
  /** Stores `v` as the account's one live link: any earlier unused link of the account stops working. */
  replace(v: EmailVerification): Promise<void>;
  /**
   * Uses up the unused, unexpired link with this hash in one conditional
   * UPDATE … RETURNING: of two concurrent calls exactly one gets it.
   * Undefined when unknown, already used or replaced, or expired (nothing changes).
   */
  consume(tokenHash: string, now: number): Promise<EmailVerification | undefined>;
  /** Sets the account's address to `email` and marks it verified (one UPDATE); false when there is no such account. */
  setVerifiedEmail(userId: string, email: string): Promise<boolean>;
  /** Marks the account's current address verified or not (an administrator's word, a change made without a link). */
  setVerified(userId: string, verified: boolean): Promise<boolean>;
  /** Forgets the account's pending links (account deletion). */
  deleteForUser(userId: string): Promise<number>;
  deleteExpired(now: number): Promise<number>;
}
