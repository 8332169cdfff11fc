import type {
  AuthorizationCode, Client, Consent, OpaqueAccessToken, RefreshToken, Session, SigningKey, TokenFamily, User,
} from './model.js';
import type { SignInStore } from './oidc/ports.js';
import type { EventStore } from './notify/ports.js';
import type { MailOutbox } from './mail/ports.js';
import type { EmailVerificationStore } from './account/verify-email-ports.js';

/**
 * Storage ports, one per concern (fosite's split). Each adapter (SQLite,
 * PostgreSQL) implements all of them and passes test/store/conformance.
 * Every method is a single atomic statement unless it says otherwise;
 * multi-step writes go through `transaction` (`Transactional`, below).
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
  /**
   * Locks the account at `at` (null unlocks): src/core/account-lock.ts. A lock
   * also sets `tokensValidAfter` to `at`, which an unlock keeps. False when
   * there is no such user.
   */
  setLocked(userId: string, at: number | null): Promise<boolean>;
}

export interface CodeStore {
  save(code: AuthorizationCode): Promise<void>;
  /**
   * Burns a single-use code of `clientId` atomically: of two concurrent calls
   * exactly one gets `{ code, replay: false }`. A code already burnt comes back
   * with `replay: true` so the caller can revoke what it issued (RFC 6749
   * §4.1.2). A code issued to another client is neither burnt nor reported as
   * a replay: it comes back undefined, like an unknown one (§4.1.3), so whoever
   * holds a public client's code cannot spend or poison it.
   */
  consume(codeHash: string, clientId: string, now: number): Promise<{ code: AuthorizationCode; replay: boolean } | undefined>;
  /**
   * Redemption in one atomic step when every check of the exchange holds:
   * burns the code of `clientId` only if it is unused, unexpired at `now`, its
   * redirect URI is absent or `redirectUri`, its PKCE challenge is
   * `challenge` (both null: none), and it is bound to no DPoP key or to `jkt`;
   * then creates its token family unless there (a concurrent replay may have
   * written it, revoked) and stores `refresh`, if given, in it. Otherwise
   * writes nothing and returns undefined: the caller then goes step by step
   * (`consume`), which burns the code and tells why.
   */
  redeem(req: CodeRedemption): Promise<AuthorizationCode | undefined>;
  /** Deletes the user's codes not yet redeemed (an account lock); returns how many. */
  deleteUnusedForUser(userId: string): Promise<number>;
  /** Deletes codes a day past their expiry (a used code is kept that long so a late replay still revokes what it issued); returns how many. */
  purgeExpired(now: number): Promise<number>;
}

/** The successor of a rotated or redeemed grant's refresh token: what is not copied from the grant. */
export interface NextRefresh {
  tokenHash: string;
  expiresAt: number;
  /** RFC 9449 §5: the key a public client's refresh token is bound to. */
  dpopJkt: string | null;
}

export interface RefreshRotation {
  tokenHash: string;
  clientId: string;
  now: number;
  /** Thumbprint of the request's DPoP key, if it sent a valid proof. */
  jkt: string | null;
  next: NextRefresh;
}

export interface CodeRedemption {
  codeHash: string;
  clientId: string;
  now: number;
  redirectUri: string | null;
  /** S256 of the code_verifier sent, null when none was. */
  challenge: string | null;
  jkt: string | null;
  refresh: NextRefresh | null;
}

export interface TokenStore {
  createFamily(family: TokenFamily): Promise<void>;
  getFamily(id: string): Promise<TokenFamily | undefined>;
  /** Revokes the family, its refresh tokens and its opaque access tokens, atomically (in a transaction of its own when the caller has none). */
  revokeFamily(id: string, now: number): Promise<void>;

  saveRefresh(token: RefreshToken): Promise<void>;
  getRefresh(tokenHash: string): Promise<RefreshToken | undefined>;
  /**
   * Marks a refresh token used, atomically: exactly one concurrent caller gets
   * `{ token, reuse: false }`; a token already rotated comes back `reuse: true`.
   */
  markRotated(tokenHash: string, now: number): Promise<{ token: RefreshToken; reuse: boolean } | undefined>;
  /**
   * Rotation in one atomic step when the token alone decides (no narrower
   * scope or resource asked for): marks the token rotated and stores its
   * successor (same family, client, user, scope and resources) only if it is
   * `clientId`'s, unrotated, unrevoked, unexpired at `now`, of an unrevoked
   * family, and bound to no DPoP key or to `jkt`. Otherwise writes nothing and
   * returns undefined: the caller then goes step by step (`getRefresh`,
   * `markRotated`), which tells why and detects reuse.
   */
  rotateRefresh(req: RefreshRotation): Promise<RefreshToken | undefined>;

  saveAccess(token: OpaqueAccessToken): Promise<void>;
  getAccess(tokenHash: string): Promise<OpaqueAccessToken | undefined>;
  revokeAccess(tokenHash: string, now: number): Promise<void>;

  /** Revocation list for self-contained (JWT) access tokens, kept until they expire. */
  revokeJti(jti: string, expiresAt: number): Promise<void>;
  isJtiRevoked(jti: string): Promise<boolean>;

  /** Deletes expired access tokens, refresh tokens and revoked-JWT entries; returns how many. */
  purgeExpired(now: number): Promise<number>;

  /**
   * Revokes every unrevoked token family of the user at every client, with
   * their refresh tokens, and every stored access token of the user (those of
   * no family too: the implicit grant's); atomically, like `revokeFamily`.
   * Returns how many families it revoked (an account lock).
   */
  revokeAllForUser(userId: string, now: number): Promise<number>;
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
  /** Retires every active key but `keep` (one kid or several), keeping them published until `expiresAt`. */
  retireOthers(keep: string | readonly string[], now: number, expiresAt: number): Promise<void>;
  deleteExpired(now: number): Promise<number>;
  /** A cheap fingerprint of the table that changes with every add, retirement and deletion: what the ring polls (src/core/oauth/keys.ts). */
  version?(): Promise<string>;
}

export interface SessionStore {
  create(session: Session): Promise<void>;
  get(idHash: string, now: number): Promise<Session | undefined>;
  delete(idHash: string): Promise<void>;
  deleteForUser(userId: string): Promise<number>;
  /** The user's unexpired sessions, newest first (the account page). */
  listForUser(userId: string, now: number): Promise<Session[]>;
  /**
   * Records a use of the session (its time and address) unless one was
   * recorded after `notBefore`: one conditional write, so concurrent requests
   * of the same minute write once. Returns whether it wrote.
   */
  touch(idHash: string, use: { at: number; ip: string | null }, notBefore: number): Promise<boolean>;
  /** Records that the person proved it again at `at` (sudo mode); false when the session is gone. Never moves it back. */
  markVerified(idHash: string, at: number): Promise<boolean>;
}

/** A fixed-window counter: events counted in the window, and when the window ends (ms). */
export interface RateCount {
  count: number;
  resetAt: number;
}

export interface RateLimitStore {
  /** Counts one event in the fixed window for `key`; returns the count in the window. */
  hit(key: string, windowMs: number, now: number): Promise<number>;
  /**
   * Counts one event on every key in one atomic step (one statement, one
   * script: one round trip), returning each key's count in `keys` order. A
   * caller decides on the counts returned, never on a read before the write,
   * so concurrent callers in any process each see a different count.
   */
  hitAll(keys: readonly string[], windowMs: number, now: number): Promise<RateCount[]>;
  /** The current counts of `keys` (0 when none), in one read. */
  peekAll(keys: readonly string[], now: number): Promise<RateCount[]>;
  peek(key: string, now: number): Promise<number>;
  /** Takes one event back from the current window (never below zero). */
  unhit(key: string, now: number): Promise<void>;
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
  /** E-mail through the outbox (src/core/mail): queue a message in the transaction of the change that causes it, through `Mailer.enqueue`. */
  mail: MailOutbox;
  /** Pending e-mail verification links (src/core/account/verify-email.ts) and the account's `email_verified`. */
  emailVerifications: EmailVerificationStore;
}

/** What a transaction offers besides its stores. */
export interface TxHooks {
  /**
   * Runs `hook` once the transaction has committed, before `transaction`
   * resolves (awaited when it returns a promise); never after a rollback.
   * Adding the same function twice runs it once (a wake-up per commit, not per row).
   */
  afterCommit(hook: () => void | Promise<void>): void;
}

/**
 * The one transaction port, for every group of stores (OAuth, chat bot,
 * third-party login, outbox): runs `fn` in one database transaction; `tx` must
 * be used for every access inside it (the embedded store has a single
 * connection). fosite's `storage/transactional.go` in TypeScript.
 */
export interface Transactional<S> {
  transaction<T>(fn: (tx: S & TxHooks) => Promise<T>): Promise<T>;
}

export interface Storage extends Stores, Transactional<Stores> {
  /** Storage reachable and migrated. */
  ready(): Promise<boolean>;
  /** Each backing service, for readiness: the database decides; Redis (when used) only degrades. */
  health?(): Promise<StorageHealth>;
  close(): Promise<void>;
}

export interface StorageHealth {
  database: 'ok' | 'down';
  redis?: 'ok' | 'down';
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
