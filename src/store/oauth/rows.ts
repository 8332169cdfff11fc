import type { AuthorizationCode, OpaqueAccessToken, RefreshToken, TokenFamily } from '../../core/model.js';
import type { AccessTokensTable, AuthorizationCodesTable, RefreshTokensTable, TokenFamiliesTable } from '../schema.js';
import { joinWords, words } from '../codec.js';

/** Rows of the token tables and the model's records, both ways (column order of the hand-written INSERTs). */
export const REFRESH_COLUMNS = [
  'token_hash', 'family_id', 'client_id', 'user_id', 'scope', 'resources', 'created_at', 'expires_at', 'rotated_at', 'revoked_at', 'cnf_jkt',
] as const;

export const ACCESS_COLUMNS = [
  'token_hash', 'jti', 'family_id', 'client_id', 'user_id', 'audience', 'act', 'scope', 'created_at', 'expires_at', 'revoked_at', 'cnf_x5t', 'cnf_jkt',
] as const;

/** PostgreSQL types of ACCESS_COLUMNS, in order. */
export const ACCESS_TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'text', 'text'] as const;

export const toRefresh = (r: RefreshTokensTable): RefreshToken => ({
  tokenHash: r.token_hash, familyId: r.family_id, clientId: r.client_id, userId: r.user_id, scope: words(r.scope),
  createdAt: r.created_at, expiresAt: r.expires_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at,
  ...(r.resources ? { resources: words(r.resources) } : {}),
  ...(r.cnf_jkt ? { dpopJkt: r.cnf_jkt } : {}),
});

export const toAccess = (r: AccessTokensTable): OpaqueAccessToken => ({
  tokenHash: r.token_hash, jti: r.jti, familyId: r.family_id, clientId: r.client_id, userId: r.user_id,
  scope: words(r.scope), createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at,
  ...(r.cnf_x5t ? { certThumbprint: r.cnf_x5t } : {}),
  ...(r.audience ? { audience: words(r.audience) } : {}),
  ...(r.act ? { act: JSON.parse(r.act) as Record<string, unknown> } : {}),
  ...(r.cnf_jkt ? { dpopJkt: r.cnf_jkt } : {}),
});

export const toFamily = (r: TokenFamiliesTable): TokenFamily =>
  ({ id: r.id, clientId: r.client_id, userId: r.user_id, scope: words(r.scope), createdAt: r.created_at, revokedAt: r.revoked_at });

export const toCode = (r: AuthorizationCodesTable): AuthorizationCode => ({
  codeHash: r.code_hash, clientId: r.client_id, userId: r.user_id, redirectUri: r.redirect_uri, scope: words(r.scope),
  codeChallenge: r.code_challenge, codeChallengeMethod: r.code_challenge_method as 'S256' | null, nonce: r.nonce,
  familyId: r.family_id, authTime: r.auth_time, createdAt: r.created_at, expiresAt: r.expires_at, consumedAt: r.consumed_at,
  ...(r.resources ? { resources: words(r.resources) } : {}),
  ...(r.dpop_jkt ? { dpopJkt: r.dpop_jkt } : {}),
});

export const refreshRow = (t: RefreshToken): unknown[] => [
  t.tokenHash, t.familyId, t.clientId, t.userId, joinWords(t.scope), t.resources?.length ? joinWords(t.resources) : null,
  t.createdAt, t.expiresAt, t.rotatedAt, t.revokedAt, t.dpopJkt ?? null,
];

export const accessRow = (t: OpaqueAccessToken): unknown[] => [
  t.tokenHash, t.jti, t.familyId, t.clientId, t.userId, t.audience?.length ? joinWords(t.audience) : null, t.act ? JSON.stringify(t.act) : null,
  joinWords(t.scope), t.createdAt, t.expiresAt, t.revokedAt, t.certThumbprint ?? null, t.dpopJkt ?? null,
];
