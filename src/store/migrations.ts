import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely';
import { authLevelsMigration } from './auth-level-migration.js';
import { botMigration } from './bot/migration.js';
import { botInteractiveMigration } from './bot/migration-interactive.js';
import { botFileQuotaMigration, botFilesMigration } from './bot/files-migration.js';
import { botCallbackAnsweredMigration, botCallbackCacheMigration } from './bot/callbacks-migration.js';
import { notifyMigration } from './notify/migration.js';
import { notifyBatchesMigration } from './notify/fanout.js';
import { notifyBatchesLz4Migration } from './notify/batch.js';
import { oidcMigration } from './oidc/migration.js';
import { federationMigration } from './federation/migration.js';
import { secretsMigration } from './secrets/migration.js';
import { adminUsersMigration } from './console/migration.js';
import { oauthCurrentMigration } from './oauth/migration.js';
import { registrationMigration } from './oauth/registration-migration.js';
import { dpopMigration } from './oauth/dpop-migration.js';
import { exchangeCibaMigration } from './oauth/exchange-ciba-migration.js';
import { mfaMigration } from './mfa/migration.js';
import { backchannelMigration } from './oauth/device-migration.js';
import { sessionUseMigration } from './session-use-migration.js';
import { reauthMigration } from './reauth-migration.js';
import { notifyLinkCodesMigration } from './notify/link-code-migration.js';
import { mailMigration } from './mail/migration.js';
import { oidcClaimsMigration } from './oidc/claims-migration.js';
import { signupMigration } from './account/signup-migration.js';
import { PendingMigrationsError } from './pending-migrations.js';
import { accessMigration } from './access/migration.js';
import { passwordResetsMigration } from './account/password-resets-migration.js';
import { emailVerificationMigration } from './account/email-verification-migration.js';
import { tokensValidAfterMigration } from './tokens-valid-after-migration.js';

/**
 * Migrations are code, written once for both dialects with kysely's schema
 * builder (bigint for times, integer for flags, text for everything else).
 * Never edit a released migration; add the next one.
 */
const migrations: Record<string, Migration> = {
  '0001_oauth': {
    async up(db: Kysely<unknown>) {
      await db.schema.createTable('clients')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text')
        .addColumn('previous_secret_hash', 'text')
        .addColumn('previous_secret_expires_at', 'bigint')
        .addColumn('redirect_uris', 'text', (c) => c.notNull())
        .addColumn('grant_types', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('auth_method', 'text', (c) => c.notNull())
        .addColumn('trusted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('introspect', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('domain', 'text')
        .addColumn('token_format', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema.createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('username_lower', 'text', (c) => c.notNull().unique())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema.createTable('authorization_codes')
        .addColumn('code_hash', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('redirect_uri', 'text')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'text')
        .addColumn('code_challenge_method', 'text')
        .addColumn('nonce', 'text')
        .addColumn('family_id', 'text', (c) => c.notNull())
        .addColumn('auth_time', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('consumed_at', 'bigint')
        .execute();
      await db.schema.createIndex('authorization_codes_expires').on('authorization_codes').column('expires_at').execute();

      await db.schema.createTable('token_families')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('token_families_user').on('token_families').columns(['user_id', 'client_id']).execute();

      await db.schema.createTable('refresh_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('family_id', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('rotated_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').column('family_id').execute();
      await db.schema.createIndex('refresh_tokens_expires').on('refresh_tokens').column('expires_at').execute();

      await db.schema.createTable('access_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('jti', 'text', (c) => c.notNull())
        .addColumn('family_id', 'text')
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('access_tokens_family').on('access_tokens').column('family_id').execute();
      await db.schema.createIndex('access_tokens_expires').on('access_tokens').column('expires_at').execute();

      await db.schema.createTable('revoked_jtis')
        .addColumn('jti', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema.createTable('consents')
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('consents_pk', ['user_id', 'client_id'])
        .execute();

      await db.schema.createTable('signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('alg', 'text', (c) => c.notNull())
        .addColumn('private_key_pem', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('retired_at', 'bigint')
        .addColumn('expires_at', 'bigint')
        .execute();

      await db.schema.createTable('sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('auth_time', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

      await db.schema.createTable('rate_limits')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '0002_bot': botMigration,
  '0003_notify': notifyMigration,
  '0004_oidc': oidcMigration,
  '0005_federation': federationMigration,
  '0006_secrets': secretsMigration,
  '0007_bot_interactive': botInteractiveMigration,
  '0008_oauth_current': oauthCurrentMigration,
  '0009_admin_users': adminUsersMigration,
  '0010_notify_batches': notifyBatchesMigration,
  '0011_bot_files': botFilesMigration,
  '0025_bot_file_quota': botFileQuotaMigration,
  '0012_dpop': dpopMigration,
  '0013_backchannel': backchannelMigration,
  '0015_mfa': mfaMigration,
  '0016_session_use': sessionUseMigration,
  '0017_bot_callback_cache': botCallbackCacheMigration,
  '0018_registration': registrationMigration,
  '0019_notify_batches_lz4': notifyBatchesLz4Migration,
  '0020_bot_callback_answered': botCallbackAnsweredMigration,
  '0023_exchange_ciba': exchangeCibaMigration,
  '0021_reauth': reauthMigration,
  '0026_oidc_claims': oidcClaimsMigration,
  '0024_notify_link_codes': notifyLinkCodesMigration,
  '0028_access': accessMigration,
  '0031_password_resets': passwordResetsMigration,
  '0032_email_verification': emailVerificationMigration,
  '0029_tokens_valid_after': tokensValidAfterMigration,
  '0030_signup': signupMigration,
  '0027_mail': mailMigration,
  '0033_auth_levels': authLevelsMigration,
};

class StaticProvider implements MigrationProvider {
  async getMigrations() {
    return migrations;
  }
}

/**
 * On PostgreSQL kysely looks for its migration tables in every schema of the
 * database unless told which one, so a second Gatehouse schema (parallel tests,
 * `?schema=`) made it skip creating its own and fail. Pin them to ours.
 */
async function migrationSchema(db: Kysely<unknown>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema;
}

function migratorFor(db: Kysely<unknown>, schema: string | undefined): Migrator {
  return new Migrator({ db, provider: new StaticProvider(), ...(schema ? { migrationTableSchema: schema } : {}) });
}

/** Applies every pending migration; returns the names this call applied, in order (none: the database was up to date). */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrator = migratorFor(db, await migrationSchema(db));
  const applied: string[] = [];
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    applied.push(...(results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName));
    const failed = results?.find((r) => r.status === 'Error');
    if (!error && !failed) return applied;
    // kysely takes no lock on SQLite: a process (the CLI, a second server) that
    // migrates the same fresh file at the same moment makes ours roll back.
    // The next run finds its migrations applied; a short pause lets the
    // other process finish a migration of several tables first.
    if (attempt === 5) throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
  }
}

/** The migrations this version has that the database has not applied yet, in the order they would run. */
export async function pendingMigrations(db: Kysely<unknown>): Promise<string[]> {
  const all = await migratorFor(db, await migrationSchema(db)).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** GATEHOUSE_MIGRATE=off: opening the database checks instead of migrating. */
export async function refusePendingMigrations(db: Kysely<unknown>): Promise<string[]> {
  const pending = await pendingMigrations(db);
  if (pending.length > 0) throw new PendingMigrationsError(pending);
  return [];
}

/** Applies only the next pending migration; its name, or undefined when none was pending (tests walk the history step by step). */
export async function migrateOneUp(db: Kysely<unknown>): Promise<string | undefined> {
  const { error, results } = await migratorFor(db, await migrationSchema(db)).migrateUp();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return results?.find((r) => r.status === 'Success')?.migrationName;
}
