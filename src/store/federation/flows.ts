import type { Kysely } from 'kysely';
import type { FlowStore } from '../../core/federation/ports.js';
import type { DB } from '../schema.js';

export class SqlFlowStore implements FlowStore {
  constructor(private readonly db: Kysely<DB>) {}

  async save(idHash: string, data: string, expiresAt: number, now: number): Promise<void> {
    // Abandoned sign-ins go with the next one; the index on expires_at keeps this cheap.
    await this.db.deleteFrom('federation_flows').where('expires_at', '<=', now).execute();
    await this.db.insertInto('federation_flows').values({ id_hash: idHash, data, expires_at: expiresAt }).execute();
  }

  async get(idHash: string, now: number): Promise<string | undefined> {
    const r = await this.db.selectFrom('federation_flows').select('data').where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
    return r?.data;
  }

  async take(idHash: string, now: number): Promise<string | undefined> {
    const r = await this.db.deleteFrom('federation_flows').where('id_hash', '=', idHash).returning(['data', 'expires_at']).executeTakeFirst();
    return r && r.expires_at > now ? r.data : undefined;
  }
}
