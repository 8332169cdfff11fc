import type { Kysely } from 'kysely';
import { GroupCommit } from '../../core/group-commit.js';
import type { DB } from '../schema.js';

/**
 * SQLite: a group is its jobs run one after another in one transaction (the
 * statements are prepared and synchronous; the commit, a WAL append of every
 * page the group touched, is what is shared).
 */
export function sqliteGroup<I, O>(db: Kysely<DB>, job: (trx: Kysely<DB>, input: I) => Promise<O>, key?: (input: I) => string): GroupCommit<I, O> {
  return new GroupCommit<I, O>((inputs) => db.transaction().execute(async (trx) => {
    const outs: O[] = [];
    for (const input of inputs) outs.push(await job(trx, input));
    return outs;
  }), { maxInFlight: 1, ...(key ? { key } : {}) });
}
