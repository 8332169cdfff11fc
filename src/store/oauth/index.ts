import type { Kysely } from 'kysely';
import type { PushedRequestStore } from '../../core/oauth/par.js';
import type { DB } from '../schema.js';
import { SqlPushedRequestStore } from './pushed.js';
import { SqlReplayStore } from './jtis.js';
import type { ReplayStore } from '../../core/oauth/client-assertion.js';
import type { BackchannelStore, DecisionTransactions } from '../../core/oauth/device-ports.js';
import { SqlBackchannelStore } from './device-requests.js';
import { SqlEventStore } from '../notify/events.js';
import type { NotifyShared } from '../notify/shared.js';
import { runTransaction } from '../transaction.js';

/** The stores of the current generation of OAuth (migration 0008_oauth_current), on the main database. */
export interface CurrentOAuthStorage {
  pushed: PushedRequestStore;
  replay: ReplayStore;
  /** Device authorization and CIBA requests (migration 0013_backchannel). */
  backchannel: BackchannelStore;
  /** A person's decision on one of them with its event, in one transaction. */
  decisions: DecisionTransactions;
}

export function sqlCurrentOAuthStorage(db: Kysely<DB>, notify: NotifyShared): CurrentOAuthStorage {
  return {
    pushed: new SqlPushedRequestStore(db), replay: new SqlReplayStore(db), backchannel: new SqlBackchannelStore(db),
    decisions: {
      transaction: (fn) => runTransaction(db, (trx, scope) => ({ backchannel: new SqlBackchannelStore(trx), events: new SqlEventStore(trx, notify, scope) }), fn),
    },
  };
}
