import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * Encryption of the secrets Gatehouse must be able to read back (signing
 * private keys, webhook signing secrets, a bot's webhook `secret_token`):
 * AES-256-GCM with a random 96-bit nonce per value (NIST SP 800-38D §8.2.2).
 * A sealed value reads `v1.<key id>.<nonce>.<ciphertext‖tag>` (base64url); the
 * caller's `aad` (table, column and row id) is authenticated with it, so a
 * ciphertext copied into another row or column does not open.
 */
export const SEALED_PREFIX = 'v1.';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Opened values remembered by their sealed form (rows read per request or per delivery attempt). */
const OPENED_MAX = 10_000;

/** An unusable secret key file, found at start-up or by the CLI: never an HTTP answer, so not a GatehouseError. */
export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

/** A key given as text (setting, key file, stdin): exactly 32 bytes, base64 or base64url. */
export function parseSecretKey(raw: string, source: string): Buffer {
  const text = raw.trim();
  const key = Buffer.from(text, 'base64');
  // Buffer.from skips characters outside the alphabet; re-encoding catches them.
  const canonical = (b: string) => b.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  if (key.length !== KEY_BYTES || canonical(key.toString('base64url')) !== canonical(text)) {
    throw new SecretKeyError(`${source} must be ${KEY_BYTES} random bytes in base64 (e.g. \`openssl rand -base64 32\`), got ${key.length === KEY_BYTES ? 'characters outside base64' : `${key.length} bytes`}`);
  }
  return key;
}

export function generateSecretKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** Names a key without revealing it: the first 8 bytes of a domain-separated SHA-256. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update('gatehouse secret key id\0').update(key).digest().subarray(0, 8).toString('base64url');
}

/** The key id a sealed value was made under, or undefined for anything else (a value stored before encryption). */
export function sealedKeyId(value: string): string | undefined {
  if (!value.startsWith(SEALED_PREFIX)) return undefined;
  return value.split('.')[1];
}

export class SecretBox {
  readonly keyId: string;
  private readonly opened = new Map<string, string>();

  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new SecretKeyError(`a secret key is ${KEY_BYTES} bytes, got ${key.length}`);
    this.keyId = secretKeyId(key);
  }

  /** A key for one purpose (`label`), derived from the secret key with HMAC-SHA-256 (a PRF, NIST SP 800-108); hex. */
  derive(label: string): string {
    return createHmac('sha256', this.key).update(`gatehouse:${label}`).digest('hex');
  }

  seal(plaintext: string, aad: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce).setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${this.keyId}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
  }

  /** Throws SecretKeyError when `sealed` was made under another key, for another `aad`, or altered. */
  open(sealed: string, aad: string): string {
    const memo = `${aad}\0${sealed}`;
    const hit = this.opened.get(memo);
    if (hit !== undefined) return hit;
    const [version, keyId, nonce, body] = sealed.split('.');
    if (`${version}.` !== SEALED_PREFIX || nonce === undefined || body === undefined) throw new SecretKeyError(`${aad}: not an encrypted value`);
    if (keyId !== this.keyId) throw new SecretKeyError(`${aad} is encrypted under secret key ${keyId}, but this process has key ${this.keyId}`);
    const bytes = Buffer.from(body, 'base64url');
    const iv = Buffer.from(nonce, 'base64url');
    let plaintext: string;
    try {
      if (iv.length !== NONCE_BYTES || bytes.length < TAG_BYTES) throw new Error('truncated');
      // A fixed tag length: GCM would otherwise accept a truncated tag.
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES }).setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      plaintext = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(`${aad} does not decrypt (altered, or moved from another row)`);
    }
    // Bounded: the oldest entry goes first (a Map iterates in insertion order).
    if (this.opened.size >= OPENED_MAX) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(memo, plaintext);
    return plaintext;
  }

  /** For the columns that may be null. */
  sealNullable(plaintext: string | null, aad: string): string | null {
    return plaintext === null ? null : this.seal(plaintext, aad);
  }

  openNullable(sealed: string | null, aad: string): string | null {
    return sealed === null ? null : this.open(sealed, aad);
  }
}
