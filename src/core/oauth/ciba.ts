import { randomUUID } from 'node:crypto';
import { GatehouseError, accessDenied, invalidClient, invalidRequest, invalidScope, unauthorizedClient } from '../errors.js';
import { randomToken, sha256 } from '../crypto.js';
import { isPublic, type Client } from '../model.js';
import { single, type Params } from '../params.js';
import type { Clock, ClientStore, RateLimitStore, UserStore } from '../ports.js';
import { resolveScope } from '../scope.js';
import type { OutboundHttp } from '../outbound.js';
import { recordEvent } from '../notify/record.js';
import type { SecretBox } from '../secret-box.js';
import { CIBA_GRANT_TYPE } from './ciba-options.js';
import type { BackchannelRequest, BackchannelStore, DecisionTransactions } from './device-ports.js';
import { pollError, type ChatApprovalPrompt } from './device.js';

export const CIBA_PATH = '/oauth/bc-authorize';
/** CIBA Core §7.3 `expires_in` when the client asks for none, and the most `requested_expiry` may ask. */
export const CIBA_DEFAULT_EXPIRY_S = 300;
export const CIBA_MAX_EXPIRY_S = 1800;
/** CIBA Core §7.1: "relatively short": it must fit a chat message and a device's screen. */
const BINDING_MESSAGE = /^[\p{L}\p{N}\p{P}\p{S} ]{1,64}$/u;
/** At most this many CIBA requests wait for one person, across all clients (issue 24; more: access_denied). */
export const CIBA_MAX_PENDING = 3;
/**
 * CIBA requests one person may be sent per minute, across all clients. With
 * at most 3 waiting, a client asking for 1-second expiries could still send
 * several prompts a second; this keeps CIBA to a small share of the chat's
 * flood budget (GATEHOUSE_BOT_FLOOD_CHAT_*: burst 20, 1 a second), so a
 * sign-in approval always finds room (at most 12 within any 60 s).
 */
export const CIBA_PROMPTS_PER_MINUTE = 6;
/** CIBA Core §13: access_denied is 403 Forbidden. */
const refused = (description: string) => accessDenied(description, { status: 403 });
/** RFC 6750 §2.1 b64token, which the notification is sent as (CIBA Core §10.2). */
const NOTIFICATION_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The sealed pair is bound to its request (AEAD associated data). */
const sealedFor = (id: string) => `backchannel:${id}`;

export interface CibaDeps {
  store: BackchannelStore;
  clients: ClientStore;
  users: Pick<UserStore, 'findByUsername'>;
  /** The decision and its event in one transaction. */
  decisions: DecisionTransactions;
  /** Counts each person's CIBA requests per minute (CIBA_PROMPTS_PER_MINUTE), across processes. */
  rateLimits: Pick<RateLimitStore, 'hitAll'>;
  clock: Clock;
  interval: number;
  /** The person's linked chat, where they approve or deny. */
  chat?: ChatApprovalPrompt | undefined;
  /** Ping mode's notification, through the outbound module's SSRF guard (registered destinations). */
  http: OutboundHttp;
  /** Seals what ping mode must send back in clear: the auth_req_id and the client's notification token. */
  secrets: Pick<SecretBox, 'seal' | 'open'>;
  /** Whether the account may act (an account locked by an administrator or by its owner may not). */
  isLocked(userId: string): Promise<boolean>;
  log?: { warn(obj: object, msg: string): void };
}

export interface CibaResponse {
  auth_req_id: string;
  expires_in: number;
  interval: number;
}

/** OpenID Connect Client-Initiated Backchannel Authentication Core 1.0: poll and ping modes. */
export class Ciba {
  constructor(private readonly deps: CibaDeps) {}

  /** CIBA Core §7: the authentication request of an authenticated client. */
  async authorize(client: Client, params: Params): Promise<CibaResponse> {
    // §7.1: the client authenticates; a public client cannot ask.
    if (isPublic(client)) throw invalidClient('a CIBA client must authenticate');
    if (!client.grantTypes.includes(CIBA_GRANT_TYPE)) throw unauthorizedClient('client is not allowed the CIBA grant');
    const clientId = single(params, 'client_id');
    if (clientId !== undefined && clientId !== client.id) throw invalidRequest('client_id does not match the authenticated client');
    const rawScope = single(params, 'scope');
    if (rawScope === undefined) throw invalidRequest('missing scope');
    const scope = resolveScope(rawScope, client.scope);
    if (!scope.includes('openid')) throw invalidScope('scope must include openid');
    // §7.1: exactly one hint; Gatehouse takes the username as login_hint.
    const hints = ['login_hint', 'id_token_hint', 'login_hint_token'].filter((h) => params[h] !== undefined);
    if (hints.length !== 1) throw invalidRequest('send exactly one of login_hint, id_token_hint and login_hint_token');
    if (hints[0] !== 'login_hint') throw invalidRequest(`${hints[0]} is not supported: send the username as login_hint`);
    const loginHint = single(params, 'login_hint')!;
    const bindingMessage = single(params, 'binding_message');
    if (bindingMessage !== undefined && !BINDING_MESSAGE.test(bindingMessage)) {
      throw new GatehouseError('invalid_binding_message', 'binding_message must be 1–64 letters, digits, punctuation or spaces');
    }
    const rawExpiry = single(params, 'requested_expiry');
    let expiry = CIBA_DEFAULT_EXPIRY_S;
    if (rawExpiry !== undefined) {
      if (!/^[1-9]\d{0,5}$/.test(rawExpiry) || Number(rawExpiry) > CIBA_MAX_EXPIRY_S) throw invalidRequest(`requested_expiry must be a whole number of seconds from 1 to ${CIBA_MAX_EXPIRY_S}`);
      expiry = Number(rawExpiry);
    }
    const ping = client.backchannelTokenDeliveryMode === 'ping';
    const notificationToken = single(params, 'client_notification_token');
    if (ping) {
      // §7.1: required in ping mode.
      if (notificationToken === undefined) throw invalidRequest('client_notification_token is required in ping mode');
      if (notificationToken.length > 1024 || !NOTIFICATION_TOKEN.test(notificationToken)) throw invalidRequest('malformed client_notification_token');
    } else if (notificationToken !== undefined) {
      throw invalidRequest('client_notification_token is for ping mode only');
    }
    if (params.user_code !== undefined) throw invalidRequest('user_code is not supported (backchannel_user_code_parameter_supported is false)');
    if (params.request !== undefined) throw invalidRequest('signed authentication requests are not supported');
    // A login_hint longer than any username names no one.
    const user = loginHint.length <= 256 ? await this.deps.users.findByUsername(loginHint) : undefined;
    // §13 unknown_user_id only for a first-party (trusted) client; any other learns no more about an unknown
    // username than about a person without a linked chat: a request that waits and expires (docs/security.md).
    if (!user && client.trusted) throw new GatehouseError('unknown_user_id', 'no account has that login_hint');
    if (user && (await this.deps.isLocked(user.id))) throw accessDenied('the account is locked', { status: 400 });
    // Whom the limits count: the person, or for an unknown name a key no account id can take.
    const subject = user?.id ?? `unknown:${sha256(loginHint)}`;
    const now = this.deps.clock.now();
    const [prompts] = await this.deps.rateLimits.hitAll([`ciba:${subject}`], 60_000, now);
    if (prompts!.count > CIBA_PROMPTS_PER_MINUTE) {
      throw refused(`at most ${CIBA_PROMPTS_PER_MINUTE} requests a minute may be sent to one person; try again later`);
    }

    const authReqId = randomToken(32);
    const id = randomUUID();
    const request: BackchannelRequest = {
      id, kind: 'ciba', secretHash: sha256(authReqId), userCodeHash: null, clientId: client.id, scope, userId: subject,
      status: 'pending', decidedAt: null, bindingMessage: bindingMessage ?? null, notificationToken: ping ? this.deps.secrets.seal(JSON.stringify([authReqId, notificationToken]), sealedFor(id)) : null,
      intervalSeconds: this.deps.interval, lastPollAt: null, createdAt: now, expiresAt: now + expiry * 1000, consumedAt: null,
    };
    if (!(await this.deps.store.createLimited(request, CIBA_MAX_PENDING))) {
      throw refused(`${CIBA_MAX_PENDING} requests already wait for this person's decision`);
    }
    if (user) await this.deps.chat?.ask(request, client).catch((err) => this.deps.log?.warn({ err }, 'CIBA: the chat message could not be sent'));
    return { auth_req_id: authReqId, expires_in: expiry, interval: this.deps.interval };
  }

  /**
   * The person decided in chat (`userId` is the chat's linked person, and the
   * request must be theirs). Records ciba.approved or ciba.denied and, in ping
   * mode, notifies the client (CIBA Core §10.2).
   */
  async decide(id: string, userId: string, approve: boolean): Promise<boolean> {
    const now = this.deps.clock.now();
    const r = await this.deps.store.get(id);
    if (!r || r.kind !== 'ciba' || r.userId !== userId) return false;
    const client = await this.deps.clients.get(r.clientId);
    // The decision and its event commit together: a failed event leaves the request undecided (and no ping).
    const decided = await this.deps.decisions.transaction(async (tx) => {
      if (!(await tx.backchannel.decide(id, userId, approve ? 'approved' : 'denied', now))) return false;
      await recordEvent(tx, approve ? 'ciba.approved' : 'ciba.denied', {
        user_id: userId, client_id: r.clientId, client_name: client?.name ?? r.clientId, scope: r.scope, binding_message: r.bindingMessage,
      }, now);
      return true;
    });
    if (!decided) return false;
    if (client?.backchannelTokenDeliveryMode === 'ping' && client.backchannelNotificationEndpoint && r.notificationToken) {
      // Not awaited by the person's tap; the client may poll anyway (§10.2: ping only says it is time to).
      void this.ping(client.backchannelNotificationEndpoint, r.notificationToken, id);
    }
    return true;
  }

  private async ping(endpoint: string, sealed: string, id: string): Promise<void> {
    try {
      const [authReqId, token] = JSON.parse(this.deps.secrets.open(sealed, sealedFor(id))) as [string, string];
      const a = await this.deps.http({
        url: endpoint, method: 'POST', timeoutMs: 10_000, maxBytes: 4096,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ auth_req_id: authReqId }),
      });
      if (a.status < 200 || a.status >= 300) this.deps.log?.warn({ status: a.status }, 'CIBA ping: the client answered an error');
    } catch (err) {
      this.deps.log?.warn({ err }, 'CIBA ping failed');
    }
  }

  /** The token endpoint's poll (CIBA Core §10.1, §11). */
  async poll(client: Client, authReqId: string): Promise<BackchannelRequest> {
    const outcome = await this.deps.store.poll('ciba', sha256(authReqId), client.id, this.deps.clock.now());
    if (outcome.kind === 'approved') return outcome.request;
    throw pollError(outcome, 'auth_req_id');
  }
}
