import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '../../src/core/crypto.js';
import type {
  AuthorizationCode, Client, OpaqueAccessToken, RefreshToken, Session, SigningKey, TokenFamily, User,
} from '../../src/core/model.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { dropDatabase, freshDatabaseUrl, type DbKind } from '../helpers/db.js';

/** A fixed instant, so expiry boundaries read plainly in the tests. */
export const T = 1_700_000_000_000;
export const MINUTE = 60_000;
export const DAY = 86_400_000;

/** Fresh storage for one suite; `close` also drops the PostgreSQL schema. */
export async function freshStorage(kind: DbKind): Promise<{ storage: SqlStorage; url: string; close(): Promise<void> }> {
  const url = freshDatabaseUrl(kind);
  const storage = await openStorage(url);
  return {
    storage,
    url,
    async close() {
      await storage.close();
      await dropDatabase(url);
    },
  };
}

/**
 * A database URL that several storages (connections, pools) can open at once:
 * a temp-file SQLite database or a fresh PostgreSQL schema. `cleanup` removes it.
 */
export function sharedDatabaseUrl(kind: DbKind): { url: string; cleanup(): Promise<void> } {
  if (kind === 'postgres') {
    const url = freshDatabaseUrl('postgres');
    return { url, cleanup: () => dropDatabase(url) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-store-'));
  return { url: `sqlite:${join(dir, 'gatehouse.db')}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
}

const id = () => randomUUID();
/** A stand-in for a stored hash: the tests never need the raw value back. */
export const hashOf = (label: string) => sha256(`${label}:${randomUUID()}`);

export const aClient = (over: Partial<Client> = {}): Client => ({
  id: id(), name: 'App', secretHash: hashOf('secret'), previousSecretHash: null, previousSecretExpiresAt: null,
  redirectUris: ['https://app.example.test/callback'], grantTypes: ['authorization_code', 'refresh_token'],
  scope: ['user', 'read'], authMethod: 'client_secret_basic', trusted: false, introspect: false, domain: null,
  tokenFormat: 'jwt', postLogoutRedirectUris: [], backchannelLogoutUri: null, createdAt: T, ...over,
});

export const aUser = (over: Partial<User> = {}): User => ({
  id: id(), username: `user_${randomUUID().slice(0, 8)}`, email: 'someone@example.test', name: null,
  passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', createdAt: T, lockedAt: null, tokensValidAfter: null, emailVerified: false, ...over,
});

export const aCode = (over: Partial<AuthorizationCode> = {}): AuthorizationCode => ({
  codeHash: hashOf('code'), clientId: id(), userId: id(), redirectUri: 'https://app.example.test/callback', scope: ['user'],
  codeChallenge: hashOf('challenge'), codeChallengeMethod: 'S256', nonce: null, familyId: id(), authTime: T,
  createdAt: T, expiresAt: T + MINUTE, consumedAt: null, ...over,
});

export const aFamily = (over: Partial<TokenFamily> = {}): TokenFamily => ({
  id: id(), clientId: id(), userId: id(), scope: ['user'], createdAt: T, revokedAt: null, ...over,
});

export const aRefresh = (family: TokenFamily, over: Partial<RefreshToken> = {}): RefreshToken => ({
  tokenHash: hashOf('refresh'), familyId: family.id, clientId: family.clientId, userId: family.userId, scope: family.scope,
  createdAt: T, expiresAt: T + DAY, rotatedAt: null, revokedAt: null, ...over,
});

export const anAccess = (family: TokenFamily | null, over: Partial<OpaqueAccessToken> = {}): OpaqueAccessToken => ({
  tokenHash: hashOf('access'), jti: id(), familyId: family?.id ?? null, clientId: family?.clientId ?? id(),
  userId: family?.userId ?? null, scope: ['user'], createdAt: T, expiresAt: T + MINUTE, revokedAt: null, ...over,
});

export const aKey = (over: Partial<SigningKey> = {}): SigningKey => {
  const kid = id();
  return {
    kid, alg: 'ES256', privateKeyPem: '-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----\n',
    publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid, alg: 'ES256', use: 'sig' },
    createdAt: T, retiredAt: null, expiresAt: null, ...over,
  };
};

export const aSession = (over: Partial<Session> = {}): Session => ({
  idHash: hashOf('session'), userId: id(), authTime: T, createdAt: T, expiresAt: T + DAY, ...over,
});
