import type { ClaimMapping } from './providers.js';

/** Who the provider says signed in, in our terms. */
export interface ExternalProfile {
  provider: string;
  subject: string;
  username: string | undefined;
  email: string | undefined;
  name: string | undefined;
}

/** A claim by name or dotted path (`data.login`); numbers (GitHub's id) become strings. */
function claim(info: Record<string, unknown>, path: string): string | undefined {
  let v: unknown = info;
  for (const key of path.split('.')) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return typeof v === 'string' && v.trim() ? v.trim().slice(0, 256) : undefined;
}

export function mapClaims(provider: string, info: Record<string, unknown>, map: ClaimMapping): ExternalProfile | undefined {
  const subject = claim(info, map.subject);
  if (!subject) return undefined;
  const email = claim(info, map.email);
  return {
    provider,
    subject,
    username: claim(info, map.username),
    email: email && /^[^\s@]+@[^\s@]+$/.test(email) && email.length <= 254 ? email : undefined,
    name: claim(info, map.name),
  };
}

/** The local username rules (src/core/admin.ts). */
export const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A username in our alphabet from what the provider calls the person; 'user' when nothing is usable. */
export function usernameBase(p: ExternalProfile): string {
  const from = p.username ?? p.email?.split('@')[0] ?? p.name ?? '';
  const cleaned = from.normalize('NFKD').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[._-]+/, '').slice(0, 56).replace(/[._-]+$/, '');
  return cleaned || 'user';
}
