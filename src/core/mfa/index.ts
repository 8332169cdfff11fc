import type { Clock, PasswordHasher, RateLimitStore, UserStore } from '../ports.js';
import type { EventStore } from '../notify/ports.js';
import type { ChatActions, NotifyBotApi } from '../notify/actions.js';
import { LocalWakeups } from '../bot/wakeups.js';
import { ChatApproval } from './approval.js';
import { ChatApprovalSetup } from './approval-setup.js';
import { SecondFactors } from './factors.js';
import type { ApprovalTransactions, MfaStore } from './ports.js';
import { SecondStep } from './second-step.js';
import { Passkeys } from './passkeys.js';

export interface Mfa {
  factors: SecondFactors;
  secondStep: SecondStep;
  approval: ChatApproval;
  passkeys: Passkeys;
  /** Turning approval in chat on: confirmed by a tap in the linked chat. */
  approvalSetup: ChatApprovalSetup;
  store: MfaStore;
}

/** Second factors, the second step of sign-in and approval in chat, wired on one store (src/gatehouse.ts). */
export function createMfa(deps: {
  store: MfaStore; users: UserStore; hasher: PasswordHasher; clock: Clock; events: EventStore; limits: RateLimitStore; issuerName: string;
  /** {auth_url}: the passkeys' origin and relying party id. */
  authUrl: () => string;
  bot: NotifyBotApi | undefined; actions: ChatActions;
  locks: { isLocked(userId: string): Promise<boolean> };
  /** An approval's decision with its event (and the lock after "Not me"), in one transaction. */
  approvals: ApprovalTransactions;
  log?: { warn(obj: object, msg: string): void };
}): Mfa {
  const { store, users, clock, events } = deps;
  // In-process wake-ups of waiting second-step pages; another process's presses are seen by re-reading.
  const wakeups = new LocalWakeups();
  const approval = new ChatApproval({
    store, events, users, clock, bot: deps.bot, wakeups, transactions: deps.approvals, ...(deps.log ? { log: deps.log } : {}),
  });
  approval.register(deps.actions);
  const linkedChat = (id: string) => approval.linkedChat(id);
  const factors = new SecondFactors({
    store, users, hasher: deps.hasher, clock, events, limits: deps.limits, issuerName: deps.issuerName,
    chatLinked: async (id) => (await linkedChat(id)) !== undefined, transactions: deps.approvals,
  });
  const approvalSetup = new ChatApprovalSetup({
    store, users, clock, bot: deps.bot, linkedChat, transactions: deps.approvals, ...(deps.log ? { log: deps.log } : {}),
  });
  approvalSetup.register(deps.actions);
  const secondStep = new SecondStep({ store, factors, approval, users, events, clock, wakeups, isLocked: (id) => deps.locks.isLocked(id) });
  const passkeys = new Passkeys({ store, factors, users, clock, authUrl: deps.authUrl });
  return { factors, secondStep, approval, passkeys, approvalSetup, store };
}
