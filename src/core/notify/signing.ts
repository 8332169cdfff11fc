import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * Standard Webhooks signatures: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * keyed with the base64 part of a `whsec_` secret; several space-separated
 * while a rotated secret is still valid.
 */
export const SECRET_PREFIX = 'whsec_';

/** 32 random bytes (Standard Webhooks allows 24 to 64). */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** Decoded keys by secret: the worker signs thousands of messages a second with a few endpoints' secrets. */
const keys = new Map<string, KeyObject>();
const KEYS_MAX = 1000;

function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64'));
    // Rotated-away secrets drop out: the oldest entry goes first.
    if (keys.size >= KEYS_MAX) keys.delete(keys.keys().next().value!);
    keys.set(secret, key);
  }
  return key;
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers for one attempt. */
export function signedHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' '),
  };
}

/** Receiver-side check, for tests and for anyone embedding Gatehouse: any listed v1 signature matches. */
export function verifySignature(secret: string, headers: Record<string, string | undefined>, body: string): boolean {
  const id = headers['webhook-id'];
  const ts = Number(headers['webhook-timestamp']);
  if (!id || !Number.isInteger(ts)) return false;
  const expected = Buffer.from(sign(secret, id, ts, body));
  return (headers['webhook-signature'] ?? '').split(' ').some((s) => {
    const got = Buffer.from(s);
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
