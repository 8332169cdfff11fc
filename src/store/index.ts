import type { Kysely } from 'kysely';
import type { Storage, Stores } from '../core/ports.js';
import { SqlClientStore } from './clients.js';
import { SqlCodeStore } from './codes.js';
import { SqlConsentStore } from './consents.js';
import { openDatabase, ping, type Database, type OpenOptions } from './db.js';
import { SqlKeyStore } from './keys.js';
import { migrateToLatest, refusePendingMigrations } from './migrations.js';
import { SqlRateLimitStore } from './rate-limits.js';
import type { DB } from './schema.js';
import { SqlSessionStore } from './sessions.js';
import { SqlSignInStore } from './oidc/sign-ins.js';
import { SqlTokenStore } from './tokens.js';
import { SqlUserStore } from './users.js';
import { SqlEventStore } from './notify/events.js';
import { NotifyShared } from './notify/shared.js';
import { SqlLinkCodeStore } from './notify/link-codes.js';
import type { LinkCodeStore } from '../core/notify/ports.js';
import { SqlMailOutbox } from './mail/outbox.js';
import { SqlEmailVerificationStore } from './account/email-verifications.js';
import { runTransaction, type TxScope } from './transaction.js';
import { sqlBotStorage } from './bot/index.js';
import { sqlFederationStorage } from './federation/index.js';
import type { BotStorage } from '../core/bot/ports.js';
import type { FederationStorage } from '../core/federation/ports.js';
import { SecretBox, SecretKeyError } from '../core/secret-box.js';
import { loadSecretKey, stagedKeyHint } from './secrets/key-file.js';
import { prepareSecrets } from './secrets/sealed.js';
import { sqlCurrentOAuthStorage, type CurrentOAuthStorage } from './oauth/index.js';
import { SqlConsoleStore } from './console/index.js';
import { sqlRegistrationStorage } from './oauth/registration.js';
import type { RegistrationStorage } from '../core/oauth/registration-ports.js';
import type { ConsoleStore } from '../core/console/ports.js';
import type { ApprovalTransactions, MfaStore } from '../core/mfa/ports.js';
import { SqlMfaStore, sqlApprovalTransactions } from './mfa/index.js';
import { SqlAccessStore, sqlAccessTransactions } from './access/index.js';
import type { AccessStore, AccessTransactions } from '../core/access/ports.js';
import { SqlInvitationStore, sqlSignupTransactions } from './account/invitations.js';
import type { InvitationStore, SignupTransactions } from '../core/account/signup-ports.js';
import { SqlUserAccountStore, sqlUserAccountTransactions } from './account/user-accounts.js';
import type { UserAccountStore, UserAccountTransactions } from '../core/account/user-accounts-ports.js';

function storesOn(db: Kysely<DB>, notify: NotifyShared, secrets: SecretBox, scope?: TxScope): Stores {
  return {
    clients: new SqlClientStore(db, undefined, secrets),
    users: new SqlUserStore(db),
    codes: new SqlCodeStore(db),
    tokens: new SqlTokenStore(db),
    consents: new SqlConsentStore(db),
    keys: new SqlKeyStore(db, secrets),
    sessions: new SqlSessionStore(db),
    rateLimits: new SqlRateLimitStore(db),
    signIns: new SqlSignInStore(db),
    events: new SqlEventStore(db, notify, scope),
    mail: new SqlMailOutbox(db, notify, secrets, scope),
    emailVerifications: new SqlEmailVerificationStore(db),
  };
}

export interface SqlStorage extends Storage {
  database: Database;
  /** The chat-bot interface's stores, on the same database, outbox and transaction port. */
  bot: BotStorage;
  /** Third-party login's stores, likewise. */
  federation: FederationStorage;
  /** Encrypts the secrets stored for reading back (src/store/secrets/sealed.ts lists them). */
  secrets: SecretBox;
  /** Pushed authorization requests and replay caches (src/store/oauth). */
  currentOAuth: CurrentOAuthStorage;
  /** The admin console's reads and account flags, on the same database. */
  console: ConsoleStore;
  /** Dynamic client registration (RFC 7591, RFC 7592), on the same database and transaction port. */
  registration: RegistrationStorage;
  /** Second factors and sign-ins waiting for one (src/core/mfa). */
  mfa: MfaStore;
  /** An approval's decision with its event, in one transaction. */
  approvals: ApprovalTransactions;
  /** One-time chat-link codes (src/core/notify/link-code.ts). */
  linkCodes: LinkCodeStore;
  /** Groups, roles and elevations (src/core/access), and an elevation's decision with its event in one transaction. */
  access: AccessStore;
  accessTransactions: AccessTransactions;
  /** Invitations to sign up, and a sign-up's writes in one transaction (src/core/account/signup.ts). */
  invitations: InvitationStore;
  signupTransactions: SignupTransactions;
  /** Accounts: operators' lists, password changes and resets, deletion (src/core/account), with the core stores in one transaction. */
  userAccounts: UserAccountStore;
  userAccountTransactions: UserAccountTransactions;
}

export interface StorageOptions extends OpenOptions {
  /** GATEHOUSE_SECRET_KEY; unset: the key file in the data folder, created on first use. */
  secretKey?: string | undefined;
  /**
   * false: another process (a `serve`'s primary, GATEHOUSE_WORKERS) already
   * applied the migrations and checked the key, so this one only opens it.
   */
  migrate?: boolean;
  /**
   * GATEHOUSE_MIGRATE: `auto` (the default) applies pending migrations;
   * `off` refuses to open a database that has any (PendingMigrationsError),
   * so only `gatehouse migrate` changes the schema.
   */
  migrations?: 'auto' | 'off';
  /** Told the names of the migrations this open applied (`gatehouse migrate` prints them). */
  onMigrated?: (applied: string[]) => void;
}

/**
 * Opens the database at `url`, applies migrations, checks the secret key
 * (SecretKeyError when it is not the one the database's secrets are under),
 * and returns every store on it.
 */
export async function openStorage(url: string, opts: StorageOptions = {}): Promise<SqlStorage> {
  const { key, source, file } = loadSecretKey(url, opts.secretKey);
  const secrets = new SecretBox(key);
  const database = await openDatabase(url, opts);
  try {
    const migrate = (db: Kysely<DB>) => (opts.migrations === 'off' ? refusePendingMigrations : migrateToLatest)(db as Kysely<unknown>);
    if (opts.migrate !== false) {
      const applied = await (database.unbounded ? database.unbounded(migrate) : migrate(database.db));
      opts.onMigrated?.(applied);
      await prepareSecrets(database.db, secrets, source);
    }
  } catch (e) {
    await database.close();
    throw e instanceof SecretKeyError ? new SecretKeyError(`${e.message}${stagedKeyHint(file)}`) : e;
  }
  const { db } = database;
  // The outbox's subscription cache and commit wake-up, shared by every store on this database.
  const notify = new NotifyShared(db, secrets);
  notify.refresh();
  return {
    ...storesOn(db, notify, secrets),
    secrets,
    database,
    bot: sqlBotStorage(db, notify),
    federation: sqlFederationStorage(db, notify),
    currentOAuth: sqlCurrentOAuthStorage(db, notify),
    console: new SqlConsoleStore(db),
    registration: sqlRegistrationStorage(db, notify, secrets),
    mfa: new SqlMfaStore(db, secrets),
    approvals: sqlApprovalTransactions(db, secrets, (trx, scope) => storesOn(trx, notify, secrets, scope)),
    linkCodes: new SqlLinkCodeStore(db),
    access: new SqlAccessStore(db),
    accessTransactions: sqlAccessTransactions(db, notify),
    invitations: new SqlInvitationStore(db),
    signupTransactions: sqlSignupTransactions(db, notify, secrets),
    userAccounts: new SqlUserAccountStore(db),
    userAccountTransactions: sqlUserAccountTransactions(db, (trx, scope) => storesOn(trx, notify, secrets, scope)),
    transaction: (fn) => runTransaction(db, (trx, scope) => storesOn(trx, notify, secrets, scope), fn),
    ready: () => ping(db),
    health: async () => ({ database: (await ping(db)) ? 'ok' : 'down' }),
    close: () => database.close(),
  };
}

export { UsernameTakenError } from './users.js';
