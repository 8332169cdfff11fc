import type { Clock, UserStore } from '../ports.js';
import type { EventStore } from '../notify/ports.js';
import type { ChatActions, NotifyBotApi } from '../notify/actions.js';
import { AccessClaims } from './claims.js';
import { Elevations } from './elevation.js';
import type { AccessStore, AccessTransactions } from './ports.js';

/** Groups, roles, their claims and elevations approved in chat (issue 28), as one process runs them. */
export interface Access {
  store: AccessStore;
  claims: AccessClaims;
  elevations: Elevations;
}

export function createAccess(deps: {
  store: AccessStore; transactions: AccessTransactions; users: Pick<UserStore, 'get'>; events: Pick<EventStore, 'endpoints'>; clock: Clock;
  bot: NotifyBotApi | undefined; actions: ChatActions; log?: { warn(obj: object, msg: string): void };
}): Access {
  const elevations = new Elevations(deps);
  elevations.register(deps.actions);
  return { store: deps.store, claims: new AccessClaims(deps.store, deps.clock), elevations };
}
