import type { Kysely } from 'kysely';
import type { SigningKey } from '../core/model.js';
import type { KeyStore } from '../core/ports.js';
import type { SecretBox } from '../core/secret-box.js';
import type { DB } from './schema.js';
import { SIGNING_KEY } from './secrets/sealed.js';

/** Private keys are stored sealed; the key ring reads them at start, on rotation and on its periodic reload, never per request. */
export class SqlKeyStore implements KeyStore {
  constructor(private readonly db: Kysely<DB>, private readonly secrets: SecretBox) {}

  async list(): Promise<SigningKey[]> {
    const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at').execute();
    return rows.map((r) => ({
      kid: r.kid, alg: r.alg as SigningKey['alg'], privateKeyPem: this.secrets.open(r.private_key_pem, SIGNING_KEY.aad(r.kid)), publicJwk: JSON.parse(r.public_jwk) as Record<string, string>,
      createdAt: r.created_at, retiredAt: r.retired_at, expiresAt: r.expires_at,
    }));
  }

  async add(k: SigningKey): Promise<void> {
    await this.db.insertInto('signing_keys').values({
      kid: k.kid, alg: k.alg, private_key_pem: this.secrets.seal(k.privateKeyPem, SIGNING_KEY.aad(k.kid)), public_jwk: JSON.stringify(k.publicJwk),
      created_at: k.createdAt, retired_at: k.retiredAt, expires_at: k.expiresAt,
    }).execute();
  }

  async retireOthers(keep: string | readonly string[], now: number, expiresAt: number): Promise<void> {
    const kids = typeof keep === 'string' ? [keep] : [...keep];
    await this.db.updateTable('signing_keys').set({ retired_at: now, expires_at: expiresAt })
      .where('kid', 'not in', kids).where('retired_at', 'is', null).execute();
  }

  async version(): Promise<string> {
    const r = await this.db.selectFrom('signing_keys')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('created_at').as('created'), eb.fn.max('retired_at').as('retired')])
      .executeTakeFirst();
    return `${String(r?.n ?? 0)}/${String(r?.created ?? '')}/${String(r?.retired ?? '')}`;
  }

  async deleteExpired(now: number): Promise<number> {
    const r = await this.db.deleteFrom('signing_keys').where('expires_at', '<', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
