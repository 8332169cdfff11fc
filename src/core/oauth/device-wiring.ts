import type { ChatActions, NotifyBotApi } from '../notify/actions.js';
import type { OutboundHttp } from '../outbound.js';
import type { Clock, Storage } from '../ports.js';
import type { SecretBox } from '../secret-box.js';
import { CredentialThrottle } from '../throttle.js';
import { Ciba } from './ciba.js';
import { ApprovalChat, registerApprovalActions } from './device-chat.js';
import type { BackchannelStore, DecisionTransactions } from './device-ports.js';
import { DeviceFlow, USER_CODE_POLICY } from './device.js';
import { cibaGrant } from './grants/ciba.js';
import { deviceCodeGrant } from './grants/device-code.js';
import type { TokenEndpoint } from './token-endpoint.js';

export interface BackchannelWiring {
  store: BackchannelStore;
  /** A decision and its event in one transaction (src/store/oauth/index.ts). */
  decisions: DecisionTransactions;
  storage: Storage;
  clock: Clock;
  issuer: () => string;
  /** GATEHOUSE_POLL_INTERVAL. */
  interval: number;
  /** The notification bot (GATEHOUSE_NOTIFY_BOT_TOKEN); undefined: no chat. */
  bot: NotifyBotApi | undefined;
  /** Clients' ping endpoints: registered destinations, through the SSRF guard. */
  http: OutboundHttp;
  secrets: Pick<SecretBox, 'seal' | 'open'>;
  isLocked(userId: string): Promise<boolean>;
  tokenEndpoint: TokenEndpoint;
  actions: ChatActions;
  log?: { warn(obj: object, msg: string): void };
}

/** Device authorization and CIBA: their services, token endpoint grants and chat buttons. */
export function createBackchannel(w: BackchannelWiring): { device: DeviceFlow; ciba: Ciba } {
  const chat = w.bot && new ApprovalChat({ bot: w.bot, events: w.storage.events, ...(w.log ? { log: w.log } : {}) });
  const device = new DeviceFlow({
    store: w.store, clients: w.storage.clients, decisions: w.decisions, clock: w.clock, issuer: w.issuer, interval: w.interval,
    userCodes: new CredentialThrottle(w.storage.rateLimits, w.clock, USER_CODE_POLICY), chat,
  });
  const ciba = new Ciba({
    store: w.store, clients: w.storage.clients, users: w.storage.users, decisions: w.decisions, rateLimits: w.storage.rateLimits, clock: w.clock, interval: w.interval, chat,
    http: w.http, secrets: w.secrets, isLocked: w.isLocked, ...(w.log ? { log: w.log } : {}),
  });
  w.tokenEndpoint.register(deviceCodeGrant(device));
  w.tokenEndpoint.register(cibaGrant(ciba));
  registerApprovalActions(w.actions, w.storage.events, { device: (id, u, a) => device.decide(id, u, a), ciba: (id, u, a) => ciba.decide(id, u, a) });
  return { device, ciba };
}
