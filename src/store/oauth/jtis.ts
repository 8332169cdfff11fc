import type { CompiledQuery, Kysely } from 'kysely';
import type { ReplayStore } from '../../core/oauth/client-assertion.js';
import type { DB } from '../schema.js';

const PURGE_EVERY_MS = 60_000;

/** `replay_jtis`: the primary key lets exactly one insert of a key succeed, whichever process makes it. */
export class SqlReplayStore implements ReplayStore {
  private purgedAt = 0;
  /** Compiled once: building a kysely query costs more than the insert (every DPoP request makes one). */
  private insert: CompiledQuery | undefined;

  constructor(private readonly db: Kysely<DB>) {}

  async remember(key: string, expiresAt: number, now: number): Promise<boolean> {
    if (now - this.purgedAt > PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.db.deleteFrom('replay_jtis').where('expires_at', '<', now).execute();
    }
    this.insert ??= this.db.insertInto('replay_jtis').values({ key: '', expires_at: 0 })
      .onConflict((oc) => oc.column('key').doNothing()).compile();
    const r = await this.db.executeQuery({ ...this.insert, parameters: [key, expiresAt] });
    return Number(r.numAffectedRows ?? 0n) === 1;
  }
}
