import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** RFC 6238 §4 defaults, which every authenticator app reads: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_S = 30;
const DIGITS = 6;

const totp = (secret: string, issuer: string, label: string) =>
  new TOTP({ issuer, label, algorithm: 'SHA1', digits: DIGITS, period: TOTP_PERIOD_S, secret: Secret.fromBase32(secret) });

/** A new shared secret: 160 bits, the HMAC-SHA-1 output size (RFC 4226 §4 R6). */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

/** The `otpauth://totp/…` URI authenticator apps scan (Key Uri Format). */
export const totpUri = (secret: string, issuer: string, account: string): string => totp(secret, issuer, account).toString();

export const isTotpCode = (code: string): boolean => /^\d{6}$/.test(code);

/**
 * The time step a code belongs to, allowing one step either side for clock
 * drift (RFC 6238 §5.2), or undefined when it matches none. The caller then
 * records the step atomically so the code cannot be used twice.
 */
export function totpStep(secret: string, code: string, now: number): number | undefined {
  if (!isTotpCode(code)) return undefined;
  const delta = totp(secret, 'gatehouse', 'x').validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? undefined : Math.floor(now / 1000 / TOTP_PERIOD_S) + delta;
}

/** Recovery codes read `xxxxx-xxxxx` (lower-case letters and digits without look-alikes). */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const RECOVERY_CODE_COUNT = 10;

export function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  // 31 symbols from a byte: the bias (256 mod 31 = 8) costs under 0.2 bit of the ~49.5 bits.
  const s = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join('');
  return `${s.slice(0, 5)}-${s.slice(5)}`;
}

/** Spaces and case as typed do not matter; the hyphen is optional. */
export function normalRecoveryCode(code: string): string | undefined {
  const c = code.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z0-9]{10}$/.test(c) ? `${c.slice(0, 5)}-${c.slice(5)}` : undefined;
}

/** Stored hashed: the codes are random enough (~50 bits) that a fast hash is safe. */
export const recoveryCodeHash = (normal: string): string => createHash('sha256').update(`gatehouse recovery code\0${normal}`).digest('base64url');

export const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};
