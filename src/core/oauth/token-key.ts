import { randomBytes } from 'node:crypto';
import { randomToken, sha256 } from '../crypto.js';

/**
 * Opaque tokens we store (access and refresh) and the key each is stored
 * under. One function derives the key from the token, for every use:
 * issuance, introspection, revocation, resource servers, refresh rotation.
 *
 * Format since issue 16: `<prefix><time><secret>`, where `prefix` is the
 * scanner prefix (`gh_at_`, `gh_rt_`), `time` the issue time in milliseconds
 * as 9 base-36 digits (`0-9a-z`, fixed width: ordered the same as the number,
 * byte-wise and in any collation that orders digits before letters) and
 * `secret` 32 random bytes, base64url (256 bits: RFC 6819 §5.1.4.2.2). The key
 * is `time` followed by the SHA-256 of the whole token (RFC 6819 §5.1.4.1.3:
 * only the hash is stored), so keys grow with time and each insert lands at
 * the right edge of the primary-key index, on pages already in cache, however
 * many tokens are stored (docs/benchmarks.md, Cost vs stored data). A lookup
 * still needs nothing but the token: one primary-key read.
 *
 * Tokens issued before had no `time` (`<prefix><secret>`): their key is the
 * SHA-256 alone. The two are told apart by length (58 against 49
 * characters), and the keys too (52 against 43), so neither can be read as
 * the other. The time in a token is no secret: `expires_in` tells it anyway.
 */
const PREFIX_LENGTH = 6;
const TIME_DIGITS = 9;
/** 36^9 - 1 ms: the year 5188. */
const MAX_TIME = 36 ** TIME_DIGITS - 1;
const TIMED = /^gh_[a-z]{2}_[0-9a-z]{9}[A-Za-z0-9_-]{43}$/;

/** Whole milliseconds within 0..max (0 for NaN): what a fixed-width time field can hold. */
const clampMs = (ms: number, max: number): number => (Number.isFinite(ms) ? Math.min(max, Math.max(0, Math.floor(ms))) : 0);

/**
 * `ms` as the fixed-width time part of a token and its key (clamped to what 9
 * digits hold): such strings compare as the times do. getUpdates' poll ids
 * start with it too.
 */
export function timePart(ms: number): string {
  return clampMs(ms, MAX_TIME).toString(36).padStart(TIME_DIGITS, '0');
}

/** A new token issued at `now`: `prefix` is one of the scanner prefixes (6 characters, `gh_xx_`). */
export function newToken(prefix: string, now: number): string {
  return prefix + timePart(now) + randomToken();
}

/**
 * The key `token` is stored under (or would be, if it were ours). Any string
 * is accepted: one not in the current format gets the former key, the hash
 * alone, which finds a token issued before and nothing else.
 */
export function tokenKey(token: string): string {
  if (TIMED.test(token)) return token.slice(PREFIX_LENGTH, PREFIX_LENGTH + TIME_DIGITS) + sha256(token);
  return sha256(token);
}

/** 2^48 - 1 ms: what a UUID version 7's time field holds (the year 10889). */
const MAX_UUID_TIME = 2 ** 48 - 1;

/** `id` (16 bytes, the first 6 the time) as a UUID version 7 string (48 bits of milliseconds, the version, the variant, random bits). */
export function uuidV7Of(id: Buffer, ms: number): string {
  id.writeUIntBE(clampMs(ms, MAX_UUID_TIME), 0, 6);
  id[6] = (id[6]! & 0x0f) | 0x70;
  id[8] = (id[8]! & 0x3f) | 0x80;
  const h = id.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * A new grant family's id, created at `now`: a UUID version 7 (48 bits of
 * milliseconds, then 74 random bits), still a UUID as the
 * ids before it were. A family is stored under its id and every refresh and
 * access token of it indexes the id (revocation by family), so ids that grow
 * with time put new families and their tokens at the right edge of those
 * indexes, as token keys are, instead of on a random page of millions
 * (docs/benchmarks.md, Cost vs stored data). The id is no secret: our JWTs
 * carry it (`fid`).
 */
export function newFamilyId(now: number): string {
  return uuidV7Of(randomBytes(16), now);
}
