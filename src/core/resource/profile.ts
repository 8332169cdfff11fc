import type { User } from '../model.js';
import { requireScope } from './scope.js';

/** Scopes that open `/user`; any one of them is enough, and each adds fields. */
export const PROFILE_SCOPES = ['user', 'profile', 'email'] as const;

/**
 * The signed-in user's profile as the granted scope allows: `username`
 * always; `user` adds `name` and `email`; `profile` adds `name`; `email`
 * adds `email`; `email_verified` comes with `email`. A token with none of
 * these scopes gets 403 `insufficient_scope` naming `user`.
 */
export function userProfile(user: User, scope: readonly string[]): Record<string, string | boolean | null> {
  requireScope(scope, { any: PROFILE_SCOPES });
  const has = (s: string) => scope.includes(s);
  const out: Record<string, string | boolean | null> = { username: user.username };
  if (has('user') || has('profile')) out.name = user.name;
  if (has('user') || has('email')) {
    out.email = user.email;
    out.email_verified = user.emailVerified === true;
  }
  return out;
}
