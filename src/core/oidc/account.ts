import type { Session } from '../model.js';
import type { Clock, Storage } from '../ports.js';
import { sessionSid } from './sso.js';

export interface AccountSession {
  sid: string;
  /** The session this request came with. */
  current: boolean;
  createdAt: number;
  authTime: number;
  expiresAt: number;
  userAgent: string | null;
  /** Where and when the session was last used (null before its first use after sign-in). */
  ip: string | null;
  lastUsedAt: number | null;
  /** Applications this session signed in to, by name. */
  apps: { clientId: string; name: string }[];
}

export interface AccountApp {
  clientId: string;
  name: string;
  scope: string[];
  grantedAt: number;
  updatedAt: number;
}

/** What the account page shows: the person's live sessions and the applications they granted access to. */
export async function accountOverview(
  deps: { storage: Storage; clock: Clock },
  userId: string,
  current: Session,
): Promise<{ sessions: AccountSession[]; apps: AccountApp[] }> {
  const { storage, clock } = deps;
  const names = new Map<string, string>();
  const nameOf = async (clientId: string) => {
    if (!names.has(clientId)) names.set(clientId, (await storage.clients.get(clientId))?.name ?? 'A removed application');
    return names.get(clientId)!;
  };
  const sessions = await Promise.all((await storage.sessions.listForUser(userId, clock.now())).map(async (s): Promise<AccountSession> => {
    const sid = sessionSid(s);
    const clientIds = [...new Set((await storage.signIns.forSession(sid)).map((x) => x.clientId))];
    return {
      sid, current: s.idHash === current.idHash, createdAt: s.createdAt, authTime: s.authTime, expiresAt: s.expiresAt,
      userAgent: s.userAgent ?? null, ip: s.ip ?? null, lastUsedAt: s.lastUsedAt ?? null, apps: await Promise.all(clientIds.map(async (clientId) => ({ clientId, name: await nameOf(clientId) }))),
    };
  }));
  // This browser first, then newest first.
  sessions.sort((a, b) => Number(b.current) - Number(a.current) || b.createdAt - a.createdAt);
  const consents = await storage.consents.listForUser(userId);
  const apps = (await Promise.all(consents.map(async (c) => {
    const client = await storage.clients.get(c.clientId);
    // Consent given to a client that was deleted since grants nothing any more.
    return client ? [{ clientId: c.clientId, name: client.name, scope: c.scope, grantedAt: c.createdAt, updatedAt: c.updatedAt }] : [];
  }))).flat();
  return { sessions, apps };
}

/**
 * Removes an application's access: the consent goes (the next sign-in asks
 * again) and every token family of this person with it is revoked, refresh
 * tokens and opaque access tokens included, in one transaction. Returns
 * whether there was anything to remove.
 */
export async function revokeApp(deps: { storage: Storage; clock: Clock }, userId: string, clientId: string): Promise<boolean> {
  const now = deps.clock.now();
  return deps.storage.transaction(async (tx) => {
    const hadConsent = await tx.consents.revoke(userId, clientId);
    const families = await tx.tokens.activeFamilies(userId, clientId);
    for (const id of families) await tx.tokens.revokeFamily(id, now);
    return hadConsent || families.length > 0;
  });
}
