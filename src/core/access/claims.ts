import type { Clock } from '../ports.js';
import type { AccessStore } from './ports.js';

/** The scopes that release a person's groups and roles, and the claims they release (issue 28). */
export const GROUPS_SCOPE = 'groups';
export const ROLES_SCOPE = 'roles';
export const ACCESS_CLAIMS = ['groups', 'roles'] as const;

export interface AccessClaimValues {
  groups?: string[];
  roles?: string[];
}

/**
 * `groups` (group names) under scope `groups`, `roles` (role names: granted
 * directly, through groups, and elevations not yet ended) under scope
 * `roles`, or asked for one by one with the `claims` parameter (OpenID
 * Connect Core §5.5; the client may still only get what its scopes allow:
 * src/core/oidc/claims-request.ts). Read when a token, ID token or UserInfo
 * answer is made, so an ended elevation is in none made after its end. Only
 * requests naming them touch storage.
 */
export class AccessClaims {
  constructor(private readonly store: Pick<AccessStore, 'groupsOf' | 'rolesOf'>, private readonly clock: Clock) {}

  async values(userId: string | null, scope: readonly string[], requested: readonly string[] = []): Promise<AccessClaimValues> {
    if (!userId) return {};
    const wants = (c: string) => scope.includes(c) || requested.includes(c);
    const out: AccessClaimValues = {};
    if (wants(GROUPS_SCOPE)) out.groups = await this.store.groupsOf(userId);
    if (wants(ROLES_SCOPE)) out.roles = await this.store.rolesOf(userId, this.clock.now());
    return out;
  }
}
