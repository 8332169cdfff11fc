import { randomBytes, randomUUID } from 'node:crypto';
import { GatehouseError, accessDenied, invalidGrant, invalidRequest, tooManyAttempts, unauthorizedClient } from '../errors.js';
import { randomToken, sha256 } from '../crypto.js';
import type { Client } from '../model.js';
import { single, type Params } from '../params.js';
import type { Clock, ClientStore } from '../ports.js';
import { formatScope, resolveScope } from '../scope.js';
import { recordEvent } from '../notify/record.js';
import type { CredentialThrottle, ThrottlePolicy } from '../throttle.js';
import type { BackchannelRequest, BackchannelStore, DecisionTransactions, PollOutcome } from './device-ports.js';

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
export const DEVICE_AUTHORIZATION_PATH = '/oauth/device_authorization';
export const DEVICE_PAGE_PATH = '/device';
/** RFC 8628 §3.2 `expires_in`: ten minutes to find the page and decide. */
export const DEVICE_CODE_TTL_S = 600;

/** RFC 8628 §6.1: 20 consonants (no vowels, so no words; no look-alike letters), 8 of them ≈ 34.5 bits. */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

/** Wrong user codes per address (and per code typed) in a window: RFC 8628 §5.1 asks for rate limiting. */
export const USER_CODE_POLICY: ThrottlePolicy = { kind: 'usercode', perCredential: 5, perAddress: 10, windowMs: 15 * 60_000 };

/** A user code drawn without modulo bias (rejection sampling over bytes). */
export function newUserCode(): string {
  let out = '';
  while (out.length < USER_CODE_LENGTH) {
    for (const b of randomBytes(16)) {
      if (b < 240 && out.length < USER_CODE_LENGTH) out += ALPHABET[b % 20];
    }
  }
  return out;
}

export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/**
 * RFC 8628 §6.1: what a person types is compared case-insensitively, without
 * the dashes and spaces they may add; undefined when it cannot be a code.
 */
export function normaliseUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== USER_CODE_LENGTH || [...code].some((c) => !ALPHABET.includes(c))) return undefined;
  return code;
}

export interface DeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Asks a person in their linked chat (src/core/oauth/device-chat.ts); absent when no notification bot is configured. */
export interface ChatApprovalPrompt {
  ask(r: BackchannelRequest, client: Client): Promise<void>;
}

export interface DeviceFlowDeps {
  store: BackchannelStore;
  clients: ClientStore;
  /** The decision and its event in one transaction. */
  decisions: DecisionTransactions;
  clock: Clock;
  issuer: () => string;
  /** GATEHOUSE_POLL_INTERVAL, seconds. */
  interval: number;
  userCodes: CredentialThrottle;
  chat?: ChatApprovalPrompt | undefined;
}

/** The error a poll answers (RFC 8628 §3.5; CIBA Core §11 uses the same codes). */
export function pollError(outcome: Exclude<PollOutcome, { kind: 'approved' }>, what: string): GatehouseError {
  switch (outcome.kind) {
    case 'pending': return new GatehouseError('authorization_pending', 'the person has not decided yet', 400);
    case 'slow_down': return new GatehouseError('slow_down', 'polling too fast: wait 5 seconds longer between requests', 400);
    case 'expired': return new GatehouseError('expired_token', `the ${what} has expired`, 400);
    case 'denied': return accessDenied('the person denied the request', { status: 400 });
    case 'used': return invalidGrant(`the ${what} was already used`);
    case 'unknown': return invalidGrant(`unknown ${what}`);
  }
}

/** RFC 8628: the device authorization endpoint, the person's page and the token endpoint's poll. */
export class DeviceFlow {
  constructor(private readonly deps: DeviceFlowDeps) {}

  /** RFC 8628 §3.1–3.2. `client` is authenticated (or a public client named by client_id). */
  async authorize(client: Client, params: Params): Promise<DeviceAuthorizationResponse> {
    if (!client.grantTypes.includes(DEVICE_GRANT_TYPE)) throw unauthorizedClient('client is not allowed the device_code grant');
    const clientId = single(params, 'client_id');
    if (clientId !== undefined && clientId !== client.id) throw invalidRequest('client_id does not match the authenticated client');
    const scope = resolveScope(single(params, 'scope'), client.scope);
    const now = this.deps.clock.now();
    const deviceCode = randomToken(32);
    for (let attempt = 0; ; attempt++) {
      const userCode = newUserCode();
      const created = await this.deps.store.create({
        id: randomUUID(), kind: 'device', secretHash: sha256(deviceCode), userCodeHash: sha256(userCode), clientId: client.id, scope,
        userId: null, status: 'pending', decidedAt: null, bindingMessage: null, notificationToken: null,
        intervalSeconds: this.deps.interval, lastPollAt: null, createdAt: now, expiresAt: now + DEVICE_CODE_TTL_S * 1000, consumedAt: null,
      });
      if (!created) {
        // A live request holds that user code (about one in 10^10 per live code): draw another.
        if (attempt < 5) continue;
        throw new GatehouseError('temporarily_unavailable', 'could not allocate a user code; try again');
      }
      const page = `${this.deps.issuer()}${DEVICE_PAGE_PATH}`;
      return {
        device_code: deviceCode,
        user_code: formatUserCode(userCode),
        verification_uri: page,
        verification_uri_complete: `${page}?user_code=${formatUserCode(userCode)}`,
        expires_in: DEVICE_CODE_TTL_S,
        interval: this.deps.interval,
      };
    }
  }

  /**
   * A signed-in person typed a user code on /device: the request and its
   * client, now bound to them (a code someone else entered first is refused).
   * Wrong codes are counted per address and per code by the atomic throttle.
   */
  async enter(input: string, userId: string, address: string): Promise<{ request: BackchannelRequest; client: Client } | { problem: string }> {
    const typed = input.slice(0, 64);
    const gate = await this.deps.userCodes.check(typed, address);
    if (!gate.allowed) throw tooManyAttempts('invalid_request', 'too many wrong codes; try again later', gate.retryAfterSeconds);
    const code = normaliseUserCode(typed);
    const now = this.deps.clock.now();
    const request = code ? await this.deps.store.byUserCode(sha256(code), now) : undefined;
    const client = request && (await this.deps.clients.get(request.clientId));
    if (!request || !client || request.kind !== 'device' || request.status !== 'pending' || !(await this.deps.store.claim(request.id, userId, now))) {
      const verdict = await this.deps.userCodes.failed(typed, address);
      if (!verdict.allowed) throw tooManyAttempts('invalid_request', 'too many wrong codes; try again later', verdict.retryAfterSeconds);
      return { problem: 'That code is not valid. Check it and try again: codes expire after ten minutes and work once.' };
    }
    const mine = { ...request, userId };
    // Also in the person's linked chat, where one tap decides it.
    await this.deps.chat?.ask(mine, client).catch(() => undefined);
    return { request: mine, client };
  }

  /** The person's decision on the consent page or in chat; false when it was no longer pending or not theirs. */
  async decide(id: string, userId: string, approve: boolean): Promise<boolean> {
    const now = this.deps.clock.now();
    const r = await this.deps.store.get(id);
    // Only the person who entered the code (src/core/oauth/device-chat.ts: forged buttons do nothing).
    if (!r || r.kind !== 'device' || r.userId !== userId) return false;
    const client = await this.deps.clients.get(r.clientId);
    // The decision and its event commit together: a failed event leaves the request undecided.
    return this.deps.decisions.transaction(async (tx) => {
      if (!(await tx.backchannel.decide(id, userId, approve ? 'approved' : 'denied', now))) return false;
      await recordEvent(tx, approve ? 'device.approved' : 'device.denied', {
        user_id: userId, client_id: r.clientId, client_name: client?.name ?? r.clientId, scope: r.scope,
      }, now);
      return true;
    });
  }

  /** The token endpoint's poll (RFC 8628 §3.4–3.5): the approved request, once, or the error to answer. */
  async poll(client: Client, deviceCode: string): Promise<BackchannelRequest> {
    const outcome = await this.deps.store.poll('device', sha256(deviceCode), client.id, this.deps.clock.now());
    if (outcome.kind === 'approved') return outcome.request;
    throw pollError(outcome, 'device_code');
  }
}

export const describeScope = (scope: string[]) => (scope.length ? formatScope(scope) : 'sign-in only');
