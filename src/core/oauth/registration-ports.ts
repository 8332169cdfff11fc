import type { ClientStore, TokenStore, Transactional } from '../ports.js';
import type { EventStore } from '../notify/ports.js';

/** An initial access token (RFC 7591 §3): by its SHA-256, with the registrations it still allows. */
export interface InitialAccessToken {
  tokenHash: string;
  uses: number;
  createdAt: number;
  expiresAt: number;
}

export interface InitialAccessTokenStore {
  create(t: InitialAccessToken): Promise<void>;
  /** The token while unexpired with a use left. */
  get(tokenHash: string, now: number): Promise<InitialAccessToken | undefined>;
  /** Takes one use: true for at most `uses` callers, across processes (one conditional UPDATE). */
  take(tokenHash: string, now: number): Promise<boolean>;
}

/** What RFC 7592 needs of a dynamically registered client beyond the client row. */
export interface ClientRegistration {
  clientId: string;
  /** SHA-256 of the registration access token. */
  tokenHash: string;
  /** The descriptive metadata registered (client_name, contacts, logo_uri, …), shown back on reads. */
  metadata: Record<string, unknown>;
  createdAt: number;
}

export interface ClientRegistrationStore {
  /** Inserts, or replaces the token and metadata of an existing registration (an update). */
  save(r: ClientRegistration): Promise<void>;
  get(clientId: string): Promise<ClientRegistration | undefined>;
  delete(clientId: string): Promise<void>;
}

export interface RegistrationStores {
  clients: ClientStore;
  tokens: TokenStore;
  events: EventStore;
  registrations: ClientRegistrationStore;
  initialTokens: InitialAccessTokenStore;
}

/** The registration stores on the main database, with the one transaction port. */
export type RegistrationStorage = RegistrationStores & Transactional<RegistrationStores>;
