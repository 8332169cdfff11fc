import type { TxHooks, UserStore } from '../ports.js';
import type { Recorder } from '../notify/record.js';
import type { MailOutbox } from '../mail/ports.js';
import type { EmailVerificationStore } from './verify-email-ports.js';

/** An invitation to sign up (`gatehouse user invite`, the console): its token is stored as a SHA-256 hash. */
export interface Invitation {
  tokenHash: string;
  email: string;
  /** The new account is a console administrator. */
  admin: boolean;
  /** Who invited (a username, or `cli`). */
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

export interface InvitationStore {
  create(inv: Invitation): Promise<void>;
  /** An unused, unexpired invitation (the sign-up page shows its address); nothing is written. */
  find(tokenHash: string, now: number): Promise<Invitation | undefined>;
  /**
   * Uses the invitation up in one conditional UPDATE (unused, unexpired at
   * `now`): of two concurrent sign-ups with it exactly one gets it back.
   */
  consume(tokenHash: string, userId: string, now: number): Promise<Invitation | undefined>;
  /** Makes the account a console administrator (an invitation with `--admin`), in the sign-up's transaction. */
  grantAdmin(userId: string): Promise<void>;
}

/** What a sign-up writes in one transaction: the account, the invitation it uses, its event and e-mail. */
export interface SignupTx extends TxHooks {
  users: UserStore;
  invitations: InvitationStore;
  events: Recorder;
  mail: MailOutbox;
  emailVerifications: EmailVerificationStore;
}

export interface SignupTransactions {
  transaction<T>(fn: (tx: SignupTx) => Promise<T>): Promise<T>;
}
