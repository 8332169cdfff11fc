import { randomFillSync } from 'node:crypto';

/**
 * The event catalogue (docs/events.md). Each type has a versioned `data`
 * shape: fields are only ever added within a version; a breaking change gets
 * the next version, announced in the `gatehouse-event-version` header.
 */
export interface EventPayloads {
  /** sid: the session's public id (OpenID Connect `sid`); null when no session began (password grant), absent in events recorded before it was added. */
  'user.login.succeeded': { user_id: string; username: string; ip: string; sid?: string | null };
  'user.login.failed': { user_id: string | null; username: string; ip: string; reason: 'invalid_credentials' | 'locked' };
  /**
   * `account`, `address`: too many failed sign-ins, for a while. The others lock the account until it is
   * unlocked (src/core/account-lock.ts): `not_me` ("Not me" on a sign-in approval in chat), `one_tap`
   * ("Lock my account"), `admin` (the console), `cli` (`gatehouse user lock`).
   */
  'user.locked': { user_id: string | null; username: string; ip: string; locked_by: 'account' | 'address' | 'not_me' | 'one_tap' | 'admin' | 'cli' };
  'user.unlocked': { user_id: string; username: string; ip: string; unlocked_by: 'admin' | 'cli' | 'password_reset' };
  /** How the account came to be: `signup` (/signup), `invitation` (an invitation link), `admin` (console), `api` (admin API), `cli` (`gatehouse user create`). */
  'user.created': { user_id: string; username: string; created_by: 'signup' | 'invitation' | 'admin' | 'api' | 'cli' };
  /** A link sent to `email` was followed (src/core/account/verify-email.ts): the account's address is now `email`, verified. */
  'user.email_verified': { user_id: string; username: string; email: string; ip: string };
  /** Who made the change (src/core/account/user-accounts.ts): `self` (the account page), `reset`, `admin` (console), `api` (admin API), `cli`. */
  'user.password_changed': { user_id: string; username: string; ip: string; changed_by: 'self' | 'reset' | 'admin' | 'api' | 'cli' };
  'user.updated': { user_id: string; username: string; fields: ('name' | 'email')[]; ip: string; updated_by: 'self' | 'reset' | 'admin' | 'api' | 'cli' };
  'user.deleted': { user_id: string; username: string; ip: string; deleted_by: 'self' | 'reset' | 'admin' | 'api' | 'cli' };
  'mfa.enrolled': { user_id: string; factor: 'totp' | 'passkey' | 'recovery_codes' | 'chat_approval'; passkey_name?: string };
  'mfa.removed': { user_id: string; factor: 'totp' | 'passkey' | 'recovery_codes' | 'chat_approval'; passkey_name?: string };
  'signin.approval.requested': { user_id: string; approval_id: string; ip: string; browser: string; expires_at: string };
  'signin.approval.approved': { user_id: string; approval_id: string; ip: string };
  'signin.approval.denied': { user_id: string; approval_id: string; ip: string; reason: 'wrong_number' | 'not_me' | 'expired' };
  'consent.granted': { user_id: string; client_id: string; client_name: string; scope: string[] };
  'consent.denied': { user_id: string; client_id: string; client_name: string; scope: string[] };
  'token.issued': {
    client_id: string; user_id: string | null; scope: string[]; token_format: 'jwt' | 'opaque'; jti: string;
    family_id: string | null; expires_at: string;
  };
  'token.revoked': {
    client_id: string; user_id: string | null; token_type: 'access_token' | 'refresh_token'; family_id: string | null; jti: string | null;
  };
  'refresh_token.reuse_detected': { client_id: string; user_id: string | null; family_id: string };
  'authorization_code.reuse_detected': { client_id: string; user_id: string; family_id: string };
  'client.created': { client_id: string; client_name: string; grant_types: string[]; redirect_uris: string[]; token_endpoint_auth_method: string };
  'client.secret_rotated': { client_id: string; previous_secret_expires_at: string };
  'bot.created': { bot_id: number; username: string; owner_user_id: string | null };
  'webhook.disabled': { endpoint_id: string; url: string | null; chat_id: string | null; reason: 'gone' | 'failing' | 'chat_unreachable'; failing_since: string | null };
  'device.approved': { user_id: string; client_id: string; client_name: string; scope: string[] };
  'device.denied': { user_id: string; client_id: string; client_name: string; scope: string[] };
  'ciba.approved': { user_id: string; client_id: string; client_name: string; scope: string[]; binding_message: string | null };
  'ciba.denied': { user_id: string; client_id: string; client_name: string; scope: string[]; binding_message: string | null };
  'admin.action': { admin_user_id: string; admin_username: string; action: string; target_type: string; target_id: string; ip: string };
  /** Elevation approved in chat (src/core/access/elevation.ts): `request_id` names one request through all four. */
  'role.requested': { user_id: string; role: string; request_id: string; minutes: number; reason: string; approvers: string; approvals_required: number };
  'role.granted': { user_id: string; role: string; request_id: string; minutes: number; until: string; approvals: number; approved_by: string };
  'role.denied': { user_id: string; role: string; request_id: string; denied_by: string };
  /** `was`: `requested` (nobody decided in time) or `granted` (the elevation ended). */
  'role.expired': { user_id: string; role: string; request_id: string; was: 'requested' | 'granted' };
}

export type EventType = keyof EventPayloads;

interface CatalogueEntry {
  version: number;
  /** Sent to the person it is about once they link a chat (docs/events.md, Chat notifications). */
  personal: boolean;
  /** Recorded only while an endpoint subscribes to it: it is on a hot path. */
  gated: boolean;
  summary: string;
}

export const EVENT_CATALOGUE: Record<EventType, CatalogueEntry> = {
  'user.login.succeeded': { version: 1, personal: true, gated: false, summary: 'a person signed in (login page or password grant)' },
  'user.login.failed': { version: 1, personal: false, gated: false, summary: 'a sign-in was refused' },
  'user.locked': { version: 1, personal: true, gated: false, summary: 'an account or address is locked: for a while after failed sign-ins, or until unlocked ("Not me", "Lock my account", an administrator)' },
  'user.unlocked': { version: 1, personal: true, gated: false, summary: 'a locked account may sign in again (an administrator, or a password reset with its second factor)' },
  'user.created': { version: 1, personal: false, gated: false, summary: 'an account was created: sign-up, an invitation, or an administrator' },
  'user.email_verified': { version: 1, personal: true, gated: false, summary: "an account's e-mail address was confirmed by following the link sent to it (a new address counts from then)" },
  'user.password_changed': { version: 1, personal: true, gated: false, summary: "an account's password was changed or reset: every session ended, every refresh token revoked" },
  'user.updated': { version: 1, personal: true, gated: false, summary: "an account's name or e-mail address was changed by an administrator" },
  'user.deleted': { version: 1, personal: false, gated: false, summary: 'an account was deleted with its personal data' },
  'mfa.enrolled': { version: 1, personal: true, gated: false, summary: 'a person added a second factor (authenticator app, passkey, recovery codes, chat approval)' },
  'mfa.removed': { version: 1, personal: true, gated: false, summary: 'a person removed a second factor' },
  'signin.approval.requested': { version: 1, personal: false, gated: false, summary: 'a sign-in waits for its approval in chat (number matching)' },
  'signin.approval.approved': { version: 1, personal: false, gated: false, summary: 'a sign-in was approved in chat with the right number' },
  'signin.approval.denied': { version: 1, personal: false, gated: false, summary: 'a sign-in approval was denied (wrong number, "Not me") or expired' },
  'consent.granted': { version: 1, personal: true, gated: false, summary: 'a person granted an application access' },
  'consent.denied': { version: 1, personal: false, gated: false, summary: 'a person refused an application access' },
  'token.issued': { version: 1, personal: false, gated: true, summary: 'an access token was issued' },
  'token.revoked': { version: 1, personal: false, gated: false, summary: 'a token was revoked at the revocation endpoint' },
  'refresh_token.reuse_detected': { version: 1, personal: true, gated: false, summary: 'a rotated refresh token was presented again; its grant was revoked' },
  'authorization_code.reuse_detected': { version: 1, personal: true, gated: false, summary: 'an authorization code was redeemed twice; what it issued was revoked' },
  'client.created': { version: 1, personal: false, gated: false, summary: 'a client was registered' },
  'client.secret_rotated': { version: 1, personal: false, gated: false, summary: "a client's secret was rotated" },
  'bot.created': { version: 1, personal: false, gated: false, summary: 'a chat bot was created' },
  'webhook.disabled': { version: 1, personal: false, gated: false, summary: 'a notification endpoint was disabled' },
  'device.approved': { version: 1, personal: true, gated: false, summary: 'a person approved a device authorization request (RFC 8628)' },
  'device.denied': { version: 1, personal: false, gated: false, summary: 'a person denied a device authorization request' },
  'ciba.approved': { version: 1, personal: true, gated: false, summary: "a person approved an application's back-channel request in chat (CIBA)" },
  'ciba.denied': { version: 1, personal: false, gated: false, summary: "a person denied an application's back-channel request in chat (CIBA)" },
  'admin.action': { version: 1, personal: false, gated: false, summary: 'an administrator changed something in the admin console' },
  'role.requested': { version: 1, personal: false, gated: false, summary: 'a person asked for a role at /account/access; its approvers were asked in chat' },
  'role.granted': { version: 1, personal: false, gated: false, summary: 'a role request got its approvals: the person holds the role until it ends' },
  'role.denied': { version: 1, personal: false, gated: false, summary: 'an approver denied a role request' },
  'role.expired': { version: 1, personal: false, gated: false, summary: 'a role request lapsed unanswered, or a granted role ended' },
};

export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];
export const PERSONAL_EVENT_TYPES = EVENT_TYPES.filter((t) => EVENT_CATALOGUE[t].personal);
export const isEventType = (t: string): t is EventType => Object.hasOwn(EVENT_CATALOGUE, t);

/** One event as recorded in the outbox; `id` is the Standard Webhooks `webhook-id`. */
export interface NotifyEvent {
  id: string;
  type: string;
  version: number;
  /** The person the event is about (routes it to their linked chat). */
  userId: string | null;
  data: Record<string, unknown>;
  createdAt: number;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = -1;
let sequence = 0;

/**
 * Random bytes for ids, drawn from a buffer filled a few hundred ids at a
 * time: one call into the CSPRNG per id was about 6 µs of every recorded
 * token.issued (docs/benchmarks.md). Ids are not secrets, only unique.
 */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;
/** Where `n` fresh random bytes start in POOL (an offset: a subarray per id cost as much as the rest of it). */
function randomAt(n: number): number {
  if (poolOffset + n > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += n;
  return at;
}

/** `width` Crockford base-32 digits of `n` (a non-negative integer), most significant first. */
function base32(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = CROCKFORD[n % 32]! + out;
    n = Math.floor(n / 32);
  }
  return out;
}

/** The id's characters as latin1 bytes, and a buffer an id is written into before it becomes one string. */
const CODES = Buffer.from(CROCKFORD, 'latin1');
const ID = Buffer.alloc(26);
/** The time part of the last id made: ids of one millisecond share it (encoded once, not per id). */
let lastTimePart = Buffer.alloc(10);

/**
 * `prefix` + a ULID-like id: 10 characters of time, 3 of a per-process
 * sequence (so ids made in one millisecond still sort in order), 13 random.
 * Written byte by byte into one buffer: a string built a character at a time
 * cost about three times as much, on every recorded token.issued.
 */
export function newId(prefix: string, now: number): string {
  if (now === lastTime) sequence++;
  else {
    lastTime = now;
    sequence = 0;
    lastTimePart = Buffer.from(base32(Math.max(0, Math.floor(now)), 10), 'latin1');
  }
  const s = sequence % 32768;
  lastTimePart.copy(ID, 0);
  ID[10] = CODES[s >> 10]!;
  ID[11] = CODES[(s >> 5) & 31]!;
  ID[12] = CODES[s & 31]!;
  const at = randomAt(13);
  for (let i = 0; i < 13; i++) ID[13 + i] = CODES[POOL[at + i]! & 31]!;
  return prefix + ID.toString('latin1');
}

export function newEvent<T extends EventType>(type: T, data: EventPayloads[T], now: number): NotifyEvent {
  const userId = (data as { user_id?: unknown }).user_id;
  return {
    id: newId('msg_', now),
    type,
    version: EVENT_CATALOGUE[type].version,
    userId: typeof userId === 'string' ? userId : null,
    data: data as unknown as Record<string, unknown>,
    createdAt: now,
  };
}

let lastMs = NaN;
let lastText = '';

/**
 * RFC 3339 in UTC, as the delivery body's `timestamp` and every time in
 * `data`. The last one is remembered: the token path formats an expiry per
 * token, and at thousands of tokens a second most fall in the same
 * millisecond as the one before.
 */
export function rfc3339(ms: number): string {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}

/** The delivery body, as docs/events.md (Delivery) documents it: `{"type","timestamp","data"}`. */
export function deliveryBody(e: NotifyEvent): string {
  return JSON.stringify({ type: e.type, timestamp: rfc3339(e.createdAt), data: e.data });
}
