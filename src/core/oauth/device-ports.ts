import type { Recorder } from '../notify/record.js';
import type { Transactional } from '../ports.js';

/**
 * Requests a person decides away from the client that asked: RFC 8628 device
 * authorization and OpenID Connect CIBA Core 1.0 back-channel authentication.
 * Both wait for a decision while the client polls the token endpoint with a
 * secret (the device_code or the auth_req_id), which is stored only as its
 * SHA-256.
 */
export type BackchannelKind = 'device' | 'ciba';
export type BackchannelStatus = 'pending' | 'approved' | 'denied';

export interface BackchannelRequest {
  /** Random, not secret: names the request in chat buttons and pages. */
  id: string;
  kind: BackchannelKind;
  /** SHA-256 of the device_code or auth_req_id. */
  secretHash: string;
  /** SHA-256 of the normalised user code (device requests only). */
  userCodeHash: string | null;
  clientId: string;
  scope: string[];
  /** The person: set at once for CIBA (login_hint), when the code is entered for a device. */
  userId: string | null;
  status: BackchannelStatus;
  /** When the person approved (the authentication the ID token attests). */
  decidedAt: number | null;
  /** CIBA Core §7.1 binding_message, shown to the person. */
  bindingMessage: string | null;
  /** CIBA Core §7.1 client_notification_token (ping mode), sent back as the bearer credential. */
  notificationToken: string | null;
  /** Seconds the client must wait between polls; slow_down adds 5 (RFC 8628 §3.5). */
  intervalSeconds: number;
  lastPollAt: number | null;
  createdAt: number;
  expiresAt: number;
  /** When tokens were issued for it: once only. */
  consumedAt: number | null;
}

export type PollOutcome =
  | { kind: 'unknown' }
  | { kind: 'expired' }
  | { kind: 'slow_down' }
  | { kind: 'pending' }
  | { kind: 'denied' }
  | { kind: 'used' }
  | { kind: 'approved'; request: BackchannelRequest };

export interface BackchannelStore {
  /** False when the user code is taken by a live request (the caller draws another). */
  create(r: BackchannelRequest): Promise<boolean>;
  /**
   * Stores a CIBA request unless `max` CIBA requests of the same `userId`
   * (any client) are still pending: undecided, unexpired, unused. Atomic
   * across processes (one statement; on PostgreSQL under a per-person lock),
   * so of requests racing for the last place exactly one gets it. False: full.
   */
  createLimited(r: BackchannelRequest, max: number): Promise<boolean>;
  get(id: string): Promise<BackchannelRequest | undefined>;
  byUserCode(userCodeHash: string, now: number): Promise<BackchannelRequest | undefined>;
  /**
   * The token endpoint's poll, atomic per request across processes: one
   * conditional UPDATE admits a poll only when the interval has passed since
   * the last one (else the interval grows by 5 s: slow_down), and another burns
   * an approved request, so of parallel polls exactly one gets the tokens.
   */
  poll(kind: BackchannelKind, secretHash: string, clientId: string, now: number): Promise<PollOutcome>;
  /**
   * Approves or denies a pending, unexpired request for `userId`: it must be
   * theirs already (CIBA) or not yet anyone's (a device code just entered).
   * True for exactly one decision.
   */
  decide(id: string, userId: string, status: 'approved' | 'denied', now: number): Promise<boolean>;
  /**
   * A device code entered by a signed-in person becomes theirs (so only they
   * may decide it in chat); false when someone else entered it first or it is
   * no longer pending.
   */
  claim(id: string, userId: string, now: number): Promise<boolean>;
  /** Deletes requests that expired before `before`. */
  purge(before: number): Promise<number>;
}

/**
 * What a person's decision on a device or CIBA request writes together, in
 * one transaction (issue 24): the request's new state and its event
 * (`device.approved`, `ciba.denied`, …). An event that cannot be written
 * leaves the request undecided, so no decision goes unrecorded.
 */
export interface DecisionStores {
  backchannel: Pick<BackchannelStore, 'decide'>;
  events: Recorder;
}

export type DecisionTransactions = Transactional<DecisionStores>;
