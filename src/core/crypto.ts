import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, base64url: 256 bits of entropy (RFC 6819 §5.1.4.2.2, §5.2.2.3). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Secrets we generate carry ≥256 bits of entropy, so a fast cryptographic hash
 * is enough to store them (RFC 6819 §5.1.4.1.3): a slow KDF only adds value for
 * low-entropy human passwords, which use argon2id instead.
 */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** Constant-time string comparison (lengths compared after hashing to equal size). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

/** RFC 7636 §4.2 S256: BASE64URL(SHA256(ASCII(code_verifier))). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
