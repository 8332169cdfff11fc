import type {
  AuthorizationCode, Client, Consent, OpaqueAccessToken, RefreshToken, Session, SigningKey, TokenFamily, User,
} from './model.js';
import type { SignInStore } from './oidc/ports.js';
import type { EventStore } from './notify/ports.js';

/**
 * Storage ports, one per concern (fosite's split). Each adapter (SQLite,
 * PostgreSQL) implements all of them and passes test/store/conformance.
 * Every method is a single atomic statement unless it says otherwise;
 * multi-step writes go through `Storage.transaction`.
 */

export interface ClientStore {
  create(client: Client): Promise<void>;
  get(id: string): Promise<Client | undefined>;
  list(): Promise<Client[]>;
  update(id: string, patch: Partial<Omit<Client, 'id' | 'createdAt'>>): Promise<boolean>;
  delete(id: string): Promise<boolean>;
}

export interface UserStore {
  create(user: User): Promise<void>;
  get(id: string): Promise<User | undefined>;
  /** Case-insensitive. */
  findByUsername(username: string): Promise<User | undefined>;
}

export interface CodeStore {
  save(code: AuthorizationCode): Promise<void>;
  /**
   * Burns a single-use code atomically: of two concurrent calls exactly one
   * gets `{ code, replay: false }`. A code already burnt comes back with
   * `replay: true` so the caller can revoke what it issued (RFC 6749 §4.1.2).
   */
  consume(codeHash: string, now: number): Promise<{ code: AuthorizationCode; replay: boolean } | undefined>;
}

export interface TokenStore {
  createFamily(family: TokenFamily): Promise<void>;
  getFamily(id: string): Promise<TokenFamily | undefined>;
  /** Revokes the family, its refresh tokens and its opaque access tokens. */
  revokeFamily(id: string, now: number): Promise<void>;

  saveRefresh(token: RefreshToken): Promise<void>;
  getRefresh(tokenHash: string): Promise<RefreshToken | undefined>;
  /**
   * Marks a refresh token used, atomically: exactly one concurrent caller gets
   * `{ token, reuse: false }`; a token already rotated comes back `reuse: true`.
   */
  markRotated(tokenHash: string, now: number): Promise<{ token: RefreshToken; reuse: boolean } | undefined>;

  saveAccess(token: OpaqueAccessToken): Promise<void>;
  getAccess(tokenHash: string): Promise<OpaqueAccessToken | undefined>;
  revokeAccess(tokenHash: string, now: number): Promise<void>;

  /** Revocation list for self-contained (JWT) access tokens, kept until they expire. */
  revokeJti(jti: string, expiresAt: number): Promise<void>;
  isJtiRevoked(jti: string): Promise<boolean>;

  /** Deletes rows that can no longer matter; returns how many. */
  purgeExpired(now: number): Promise<number>;

  /** Ids of the unrevoked token families of one user with one client (the account page's "remove access"). */
  activeFamilies(userId: string, clientId: string): Promise<string[]>;
}

export interface ConsentStore {
  get(userId: string, clientId: string): Promise<Consent | undefined>;
  /** Adds scopes to what the user granted the client (union). */
  grant(userId: string, clientId: string, scope: string[], now: number): Promise<Consent>;
  revoke(userId: string, clientId: string): Promise<boolean>;
  listForUser(userId: string): Promise<Consent[]>;
}

export interface KeyStore {
  list(): Promise<SigningKey[]>;
  add(key: SigningKey): Promise<void>;
  /** Retires every active key but `kid`, keeping them published until `expiresAt`. */
  retireOthers(kid: string, now: number, expiresAt: number): Promise<void>;
  deleteExpired(now: number): Promise<number>;
}

export interface SessionStore {
  create(session: Session): Promise<void>;
  get(idHash: string, now: number): Promise<Session | undefined>;
  delete(idHash: string): Promise<void>;
  deleteForUser(userId: string): Promise<number>;
  /** The user's unexpired sessions, newest first (the account page). */
  listForUser(userId: string, now: number): Promise<Session[]>;
}

export interface RateLimitStore {
  /** Counts one event in the fixed window for `key`; returns the count in the window. */
  hit(key: string, windowMs: number, now: number): Promise<number>;
  peek(key: string, now: number): Promise<number>;
  reset(key: string): Promise<void>;
}

export interface Stores {
  clients: ClientStore;
  users: UserStore;
  codes: CodeStore;
  tokens: TokenStore;
  consents: ConsentStore;
  keys: KeyStore;
  sessions: SessionStore;
  rateLimits: RateLimitStore;
  /** Which applications each session signed in to (single sign-on, single logout). */
  signIns: SignInStore;
  /** The outbox (src/core/notify/ports.ts): append events in the transaction of the change that causes them. */
  events: EventStore;
}

export interface Storage extends Stores {
  /**
   * Runs `fn` in one database transaction; `tx` must be used for every access
   * inside it (the embedded store has a single connection).
   */
  transaction<T>(fn: (tx: Stores) => Promise<T>): Promise<T>;
  /** Storage reachable and migrated. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
