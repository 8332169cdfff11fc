import type { Kysely } from 'kysely';
import type { SigningKey } from '../core/model.js';
import type { KeyStore } from '../core/ports.js';
import type { DB } from './schema.js';

export class SqlKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<DB>) {}

  async list(): Promise<SigningKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at').execute();
    return rows.map((r) => ({
      kid: r.kid, alg: 'ES256', privateKeyPem: r.private_key_pem, publicJwk: JSON.parse(r.public_jwk) as Record<string, string>,
      createdAt: r.created_at, retiredAt: r.retired_at, expiresAt: r.expires_at,
    }));
  }

  async add(k: SigningKey): Promise<void> {
    await this.db.insertInto('signing_keys').values({
      kid: k.kid, alg: k.alg, private_key_pem: k.privateKeyPem, public_jwk: JSON.stringify(k.publicJwk),
      created_at: k.createdAt, retired_at: k.retiredAt, expires_at: k.expiresAt,
    }).execute();
  }

  async retireOthers(kid: string, now: number, expiresAt: number): Promise<void> {
    await this.db.updateTable('signing_keys').set({ retired_at: now, expires_at: expiresAt })
      .where('kid', '!=', kid).where('retired_at', 'is', null).execute();
  }

  async deleteExpired(now: number): Promise<number> {
    const r = await this.db.deleteFrom('signing_keys').where('expires_at', '<', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
