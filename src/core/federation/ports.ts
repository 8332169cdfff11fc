import type { Recorder } from '../notify/record.js';
import type { Transactional, UserStore } from '../ports.js';

/** An account at a provider, known here as a local user (provider, subject → user). */
export interface ExternalIdentity {
  provider: string;
  subject: string;
  userId: string;
  createdAt: number;
  lastLoginAt: number;
}

export interface IdentityStore {
  find(provider: string, subject: string): Promise<ExternalIdentity | undefined>;
  /** Records the link; false when this (provider, subject) is linked already, to anyone. */
  link(identity: ExternalIdentity): Promise<boolean>;
  touch(provider: string, subject: string, now: number): Promise<void>;
  /** Forgets a link whose local user is gone. */
  unlink(provider: string, subject: string): Promise<void>;
  listForUser(userId: string): Promise<ExternalIdentity[]>;
}

/**
 * Short-lived sign-in state, keyed by the hash of a random handle the
 * browser holds (so a leaked table cannot be replayed as cookies).
 */
export interface FlowStore {
  save(idHash: string, data: string, expiresAt: number, now: number): Promise<void>;
  get(idHash: string, now: number): Promise<string | undefined>;
  /** Reads and deletes at once: of two concurrent calls exactly one gets the data. */
  take(idHash: string, now: number): Promise<string | undefined>;
}

export interface FederationStores {
  identities: IdentityStore;
  flows: FlowStore;
  users: UserStore;
  /** The outbox: an event recorded in a transaction commits with it. */
  events: Recorder;
}

export type FederationStorage = FederationStores & Transactional<FederationStores>;
