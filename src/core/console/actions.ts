import type { Client, Session } from '../model.js';
import { lockAccount, unlockAccount, type LockedBy, type LockResult, type UnlockedBy } from '../account-lock.js';
import type { Clock, Storage } from '../ports.js';
import { invalidRequest, notFound } from '../errors.js';
import { parseScope } from '../scope.js';
import { redirectUriProblem } from '../oauth/redirect-uri.js';
import { recordEvent } from '../notify/record.js';
import { sessionSid } from '../oidc/sso.js';

/**
 * What the admin console does beyond the operations the JSON admin API and
 * the command line share (src/core/admin.ts: client creation and secret
 * rotation; src/core/oauth/keys.ts: key rotation; src/core/notify/endpoints.ts:
 * replay). Every change is recorded as an `admin.action` event (docs/events.md).
 */
export interface Admin {
  userId: string;
  username: string;
  ip: string;
}

export type AdminAction =
  | 'client.create' | 'client.update' | 'client.rotate_secret' | 'client.delete'
  | 'user.lock' | 'user.unlock' | 'user.reset_sessions' | 'user.end_session' | 'user.remove_app'
  | 'user.create' | 'user.update' | 'user.set_password' | 'user.send_reset' | 'user.delete' | 'user.invite'
  | 'keys.rotate'
  | 'webhook.resend' | 'webhook.replay' | 'webhook.enable' | 'webhook.disable'
  | 'mail.resend' | 'mail.replay'
  | 'group.create' | 'group.add_member' | 'group.remove_member' | 'role.create' | 'role.grant';

export async function recordAdminAction(storage: Pick<Storage, 'events'>, clock: Clock, admin: Admin, action: AdminAction, target: { type: string; id: string }): Promise<void> {
  await recordEvent(storage, 'admin.action', {
    admin_user_id: admin.userId, admin_username: admin.username, action, target_type: target.type, target_id: target.id, ip: admin.ip,
  }, clock.now());
}

/** The lines of a text area: one redirect URI a line, blank lines ignored. */
export const lines = (text: string): string[] => [...new Set(text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean))];

const REDIRECTING_GRANTS = ['authorization_code', 'implicit'];

/**
 * New redirect URIs and scope of a registered client, checked as creation
 * checks them (exact URIs, https except on loopback, under the bound domain).
 */
export async function updateClientRegistration(storage: Pick<Storage, 'clients'>, clientId: string, input: { redirectUris: string[]; scope: string }): Promise<Client> {
  const client = await storage.clients.get(clientId);
  if (!client) throw notFound('unknown client');
  if (input.redirectUris.length > 50) throw invalidRequest('at most 50 redirect URIs');
  for (const uri of input.redirectUris) {
    if (uri.length > 2000) throw invalidRequest('a redirect URI is at most 2000 characters');
    const problem = redirectUriProblem(uri, client.domain);
    if (problem) throw invalidRequest(problem);
  }
  if (!input.redirectUris.length && client.grantTypes.some((g) => REDIRECTING_GRANTS.includes(g))) {
    throw invalidRequest('a client that uses the authorization code or implicit grant needs at least one redirect URI');
  }
  if (input.scope.length > 2000) throw invalidRequest('the scope is at most 2000 characters');
  const scope = parseScope(input.scope);
  const patch = { redirectUris: input.redirectUris, scope };
  if (!(await storage.clients.update(clientId, patch))) throw notFound('unknown client');
  return { ...client, ...patch };
}

/**
 * Ends every session of a person (and tells the applications they signed in
 * to, through `revoke`: OpenID Connect Back-Channel Logout 1.0); returns how many.
 * With `keep` (a session's sid), that one session stays: the account page's
 * "Sign out everywhere else".
 */
export async function resetSessions(
  deps: { storage: Pick<Storage, 'sessions'>; clock: Clock; revoke(userId: string, sid: string): Promise<unknown> },
  userId: string,
  opts: { keep?: string } = {},
): Promise<number> {
  const others = (await deps.storage.sessions.listForUser(userId, deps.clock.now())).filter((s) => sessionSid(s) !== opts.keep);
  for (const s of others) await deps.revoke(userId, sessionSid(s));
  if (opts.keep === undefined) {
    // Whatever ended between the list and now, or had no sid of its own.
    await deps.storage.sessions.deleteForUser(userId);
  } else {
    // Whatever signed in between the list and now, except the session kept.
    for (const s of await deps.storage.sessions.listForUser(userId, deps.clock.now())) {
      if (sessionSid(s) !== opts.keep) await deps.storage.sessions.delete(s.idHash);
    }
  }
  return others.length;
}

/**
 * Locks an account (src/core/account-lock.ts: sessions ended, tokens revoked,
 * `user.locked`, in one transaction); then tells the applications its sessions
 * had signed in to (OpenID Connect Back-Channel Logout 1.0, through `signedOut`).
 */
export async function lockUser(
  deps: { storage: Pick<Storage, 'sessions' | 'transaction'>; clock: Clock; signedOut?(session: Session): Promise<unknown> },
  userId: string,
  by: { by: LockedBy; ip?: string | null },
): Promise<LockResult> {
  const now = deps.clock.now();
  const sessions = deps.signedOut ? await deps.storage.sessions.listForUser(userId, now) : [];
  const locked = await deps.storage.transaction((tx) => lockAccount(tx, userId, by, now));
  if (!locked) throw notFound('unknown user');
  for (const s of sessions) await deps.signedOut!(s);
  return locked;
}

/** Lifts a lock (src/core/account-lock.ts); notFound when there is no such user. */
export async function unlockUser(
  deps: { storage: Pick<Storage, 'sessions' | 'users' | 'transaction'>; clock: Clock },
  userId: string,
  by: { by: UnlockedBy; ip?: string | null },
): Promise<{ userId: string; username: string; wasLocked: boolean }> {
  const r = await unlockAccount(deps.storage, userId, by, deps.clock.now());
  if (!r) throw notFound('unknown user');
  return r;
}
