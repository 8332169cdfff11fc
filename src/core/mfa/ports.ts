import type { Transactional } from '../ports.js';
import type { Recorder } from '../notify/record.js';
import type { LockStores } from '../account-lock.js';

/** Second factors (docs/security.md, Second factors): what the stores keep. */

export interface TotpFactor {
  userId: string;
  /** The base32 secret, in clear here; sealed at rest (src/store/secrets/sealed.ts, MFA_TOTP_SECRET). */
  secret: string;
  /** Null until a code from the app confirmed it: an unconfirmed factor does not count. */
  confirmedAt: number | null;
  createdAt: number;
}

export interface Passkey {
  /** The credential id, base64url (WebAuthn §6.1). */
  id: string;
  userId: string;
  name: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  createdAt: number;
  lastUsedAt: number | null;
}

export type ApprovalState = 'waiting' | 'approved' | 'denied' | 'expired';

/** How far back the sweep of expired approvals looks (src/core/mfa/approval.ts): a message it could not edit for an hour is left. */
export const APPROVAL_SWEEP_WINDOW_MS = 3600_000;

/** A sign-in that passed the password and waits for its second step: no session exists yet. */
export interface PendingLogin {
  userId: string;
  returnTo: string;
  userAgent: string | null;
  ip: string;
  createdAt: number;
  expiresAt: number;
  /** Sign-in approval in chat, when one was sent. */
  approval: {
    id: string;
    /** The number the page shows; the buttons carry indexes into `choices`, never the number. */
    number: number;
    choices: number[];
    chatId: string;
    messageId: number | null;
    state: ApprovalState;
    expiresAt: number;
  } | null;
}

/** What a change of a second factor writes together: the change and its event (mfa.enrolled, mfa.removed). */
export interface FactorStores {
  mfa: MfaStore;
  events: Recorder;
}

export type FactorTransactions = Transactional<FactorStores>;

/** A request to turn approval in chat on, confirmed by a tap in the chat it was sent to (src/core/mfa/approval-setup.ts). */
export interface ChatApprovalRequest {
  id: string;
  chatId: string;
  expiresAt: number;
}

export interface MfaStore {
  getTotp(userId: string): Promise<TotpFactor | undefined>;
  /** Replaces any unconfirmed secret (a confirmed one is kept: returns false). */
  startTotp(userId: string, secret: string, now: number): Promise<boolean>;
  confirmTotp(userId: string, step: number, now: number): Promise<boolean>;
  /**
   * RFC 6238 §5.2: a code is accepted once. Compare-and-set of the last used
   * time step: true only for the one caller that moved it forward to `step`.
   */
  useTotpStep(userId: string, step: number): Promise<boolean>;
  deleteTotp(userId: string): Promise<boolean>;

  /** Replaces every recovery code of the user with these hashes. */
  setRecoveryCodes(userId: string, hashes: string[], now: number): Promise<void>;
  /** Burns one unused code: true for exactly one of concurrent callers. */
  useRecoveryCode(userId: string, hash: string, now: number): Promise<boolean>;
  recoveryCodesLeft(userId: string): Promise<number>;
  deleteRecoveryCodes(userId: string): Promise<number>;

  addPasskey(p: Passkey): Promise<void>;
  listPasskeys(userId: string): Promise<Passkey[]>;
  getPasskey(id: string): Promise<Passkey | undefined>;
  /** WebAuthn §7.2 step 21: the signature counter only moves forward (compare-and-set). */
  usePasskey(id: string, counter: number, now: number): Promise<boolean>;
  deletePasskey(userId: string, id: string): Promise<boolean>;

  chatApproval(userId: string): Promise<boolean>;
  /** Off, or on by `confirmChatApproval` only (turning it on waits for a tap in the linked chat); either way any open request ends. */
  setChatApproval(userId: string, on: boolean): Promise<void>;
  /** Opens the request to turn approval in chat on (replacing an older one of the person): its id, the chat asked, its expiry. */
  requestChatApproval(userId: string, r: ChatApprovalRequest): Promise<void>;
  /** The open request with this id, expired or not. */
  chatApprovalRequest(id: string): Promise<(ChatApprovalRequest & { userId: string }) | undefined>;
  /** The tap: turns approval on and ends the request, if it is still open and unexpired; true for exactly one caller. */
  confirmChatApproval(id: string, now: number): Promise<boolean>;
  /** Ends the request without turning anything on ("Cancel"); true when it was open. */
  dropChatApprovalRequest(id: string): Promise<boolean>;

  /** Short-lived WebAuthn challenges, by the hash of a browser cookie. */
  putChallenge(idHash: string, c: { userId: string | null; challenge: string; expiresAt: number }): Promise<void>;
  /** Single use: returns and deletes it (undefined when absent, expired or taken by another request). */
  takeChallenge(idHash: string, now: number): Promise<{ userId: string | null; challenge: string } | undefined>;

  putPending(idHash: string, p: PendingLogin): Promise<void>;
  getPending(idHash: string, now: number): Promise<PendingLogin | undefined>;
  /** Ends a pending login once (its second step passed): true for exactly one caller. */
  consumePending(idHash: string, now: number): Promise<boolean>;
  setApprovalMessage(approvalId: string, messageId: number): Promise<void>;
  /** The pending login an approval belongs to. */
  findApproval(approvalId: string): Promise<{ idHash: string; pending: PendingLogin } | undefined>;
  /** Moves a waiting, unexpired approval to `to`: true for exactly one caller (the one decision). */
  decideApproval(approvalId: string, to: 'approved' | 'denied', now: number): Promise<boolean>;
  /** Marks a waiting approval expired once it is past its time; true when this call did it. */
  expireApproval(approvalId: string, now: number): Promise<boolean>;
  /**
   * Approvals whose chat message still shows its buttons though they can no
   * longer act: waiting past their time, or expired with the message not yet
   * edited (a message id is kept until its edit succeeded). Sign-ins of the
   * last APPROVAL_SWEEP_WINDOW_MS only.
   */
  approvalsToClose(now: number, limit: number): Promise<PendingLogin[]>;
  /** The message now says the outcome: nothing left to edit (clears the message id if it is still this one). */
  approvalMessageEdited(approvalId: string, messageId: number): Promise<void>;
  purge(now: number): Promise<void>;
}

/**
 * What an approval's decision writes together, in one transaction: the new
 * state, its event and, after "Not me", the account's lock — a crash between
 * them must not leave a decision without its event.
 */
export interface ApprovalStores extends LockStores {
  /** The whole store: a factor's change and its event commit together too (src/core/mfa/factors.ts). */
  mfa: MfaStore;
  events: Recorder;
}

export type ApprovalTransactions = Transactional<ApprovalStores>;
