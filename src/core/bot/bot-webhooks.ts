import { parseRetryAfter } from '../outbound.js';
import type { Clock } from '../ports.js';
import { notFromWebhookReply } from './method.js';
import type { BotRecord, BotStore, StoredUpdate, UpdateStore } from './ports.js';
import { topics, type Wakeups } from './wakeups.js';

export interface BotWebhookReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends one JSON POST; rejects on network failure. Injected: the edge owns sockets and the SSRF guard. */
export type WebhookPost = (url: string, body: string, headers: Record<string, string>, signal?: AbortSignal) => Promise<BotWebhookReply>;

export interface RetryPolicy {
  /** First retry after this long, then doubling (Telegram: 1 s, up to about a minute). */
  baseMs: number;
  maxMs: number;
}

export const defaultRetryPolicy: RetryPolicy = { baseMs: 1000, maxMs: 60_000 };

/**
 * Which process delivers a bot's updates: with several processes, only the
 * holder of the bot's lease (renewed on every pass) sends, so no update goes
 * out twice in parallel and per-chat order holds. One process: always us.
 */
export interface DeliveryLease {
  /** Takes or renews the lease for `ms`; false while another process holds it. */
  acquire(botId: number, ms: number): Promise<boolean>;
}

export const LEASE_MS = 15_000;

export interface DelivererDeps {
  bots: BotStore;
  updates: UpdateStore;
  wakeups: Wakeups;
  clock: Clock;
  /** Runs a method named in a webhook's reply, as the bot (BotApi.callAs). */
  callAs: (bot: BotRecord, method: string, params: Record<string, unknown>) => Promise<unknown>;
}
export const soleProcess: DeliveryLease = { acquire: async () => true };

/** Retry-After (seconds or an HTTP-date), at most an hour. */
function retryAfterMs(reply: BotWebhookReply, now: number): number {
  return Math.min(parseRetryAfter(reply.headers['retry-after'], now) ?? 0, 3600_000);
}

function describeFailure(e: unknown): string {
  const code = (e as { code?: string }).code;
  if (code === 'ECONNREFUSED') return 'Connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'Failed to resolve host: Name or service not known';
  if (code === 'EADDRNOTAVAIL') return (e as Error).message;
  if (code === 'ECONNRESET') return 'Connection reset by peer';
  if (code === 'ETIMEDOUT') return 'Read timeout expired';
  return (e as Error).message || 'Connection failed';
}

/**
 * Delivers one bot's updates to its webhook: in order per chat (a chat's
 * next update waits for the previous one), up to max_connections chats at
 * once, retrying with exponential backoff and honouring Retry-After.
 * Woken by the same wake-ups as long polls; retries sleep on a timer.
 */
class BotDelivery {
  private readonly busyChats = new Set<number | null>();
  /**
   * What this process stored of an update once its send ended (Infinity
   * attempts: delivered and deleted), kept until a list shows it: a pump's
   * list may have been read while that send was ending, and its stale row
   * would send the update again, or retry it before its backoff.
   */
  private readonly settled = new Map<number, { attempts: number; nextAttemptAt: number }>();
  private active = 0;
  private timer: NodeJS.Timeout | undefined;
  private pumping = false;
  private again = false;
  stopped = false;

  constructor(private readonly botId: number, private readonly owner: BotWebhookDeliverer) {}

  kick(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.pump().catch((err) => this.owner.onError(err)).finally(() => {
      this.pumping = false;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async pump(): Promise<void> {
    const { bots, updates, clock } = this.owner.deps;
    const bot = await bots.get(this.botId);
    if (!bot?.webhook) return this.owner.drop(this.botId);
    if (!(await this.owner.lease.acquire(bot.id, LEASE_MS))) {
      // Another process delivers; try again when its lease would have lapsed.
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.kick(), LEASE_MS / 2).unref();
      return;
    }
    const pending = this.fresh(await updates.list(bot.id, undefined, 100));
    const now = clock.now();
    const blocked = new Set<number | null>();
    // Renew the lease while deliveries or retries are outstanding.
    let wakeAt = pending.length ? now + LEASE_MS / 2 : Infinity;
    for (const u of pending) {
      if (this.active >= bot.webhook.maxConnections) break;
      if (u.attempts === Infinity) continue; // Delivered since the list was read: the chat's next update may go.
      if (blocked.has(u.chatId) || this.busyChats.has(u.chatId)) {
        blocked.add(u.chatId);
        continue;
      }
      blocked.add(u.chatId);
      if (u.nextAttemptAt > now) {
        wakeAt = Math.min(wakeAt, u.nextAttemptAt);
        continue;
      }
      this.busyChats.add(u.chatId);
      this.active++;
      void this.deliver(bot, u).finally(() => {
        this.busyChats.delete(u.chatId);
        this.active--;
        this.kick();
      });
    }
    clearTimeout(this.timer);
    if (wakeAt !== Infinity) this.timer = setTimeout(() => this.kick(), Math.max(0, wakeAt - now)).unref();
  }

  /**
   * The list with what this process settled since applied over its stale
   * rows. An entry is forgotten once a list shows the update as stored or no
   * longer shows it: every list read after that began after the entry's write.
   */
  private fresh(list: StoredUpdate[]): StoredUpdate[] {
    if (this.settled.size === 0) return list;
    const listed = new Map(list.map((u) => [u.updateId, u]));
    for (const [id, s] of this.settled) {
      const row = listed.get(id);
      if (row === undefined || row.attempts >= s.attempts) this.settled.delete(id);
      else listed.set(id, { ...row, ...s });
    }
    return [...listed.values()];
  }

  private async deliver(bot: BotRecord, u: StoredUpdate): Promise<void> {
    const { deps, post, policy } = this.owner;
    const { bots, updates, clock } = deps;
    const webhook = bot.webhook!;
    const headers: Record<string, string> = {};
    if (webhook.secretToken) headers['x-telegram-bot-api-secret-token'] = webhook.secretToken;
    let failure: string;
    let wait = 0;
    try {
      const reply = await post(webhook.url, JSON.stringify(u.update), headers, this.owner.signal);
      if (reply.status >= 200 && reply.status < 300) {
        await updates.delete(bot.id, u.updateId);
        this.settled.set(u.updateId, { attempts: Infinity, nextAttemptAt: Infinity });
        await this.replyMethod(bot, reply);
        return;
      }
      failure = `Wrong response from the webhook: ${reply.status}`;
      wait = retryAfterMs(reply, clock.now());
    } catch (e) {
      if (this.stopped) return;
      failure = describeFailure(e);
    }
    const attempts = u.attempts + 1;
    const now = clock.now();
    const backoff = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempts - 1, 20));
    const nextAttemptAt = now + Math.max(backoff, wait);
    await updates.markAttempt(bot.id, u.updateId, attempts, nextAttemptAt);
    this.settled.set(u.updateId, { attempts, nextAttemptAt });
    await bots.setLastError(bot.id, now, failure);
  }

  /** A 2xx reply may carry one method call (Bot API, "Making requests when getting updates"). */
  private async replyMethod(bot: BotRecord, reply: BotWebhookReply): Promise<void> {
    const type = reply.headers['content-type'];
    if (!reply.body || (typeof type === 'string' && !type.includes('json'))) return;
    let call: unknown;
    try {
      call = JSON.parse(reply.body);
    } catch {
      return;
    }
    if (!call || typeof call !== 'object' || Array.isArray(call)) return;
    const { method, ...params } = call as Record<string, unknown>;
    if (typeof method !== 'string' || notFromWebhookReply(method)) return;
    try {
      await this.owner.deps.callAs(bot, method, params);
    } catch {
      // As with Telegram, the bot never learns the outcome of a reply-body call.
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

export class BotWebhookDeliverer {
  private readonly bots = new Map<number, BotDelivery>();
  private readonly unsubscribe: (() => void)[] = [];
  private readonly aborter = new AbortController();

  constructor(
    readonly deps: DelivererDeps,
    readonly post: WebhookPost,
    readonly policy: RetryPolicy = defaultRetryPolicy,
    readonly onError: (err: unknown) => void = () => {},
    readonly lease: DeliveryLease = soleProcess,
  ) {}

  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  async start(): Promise<void> {
    const { wakeups, bots } = this.deps;
    this.unsubscribe.push(wakeups.subscribe(topics.webhooks, (id) => this.watch(Number(id))));
    for (const bot of await bots.listWithWebhook()) this.watch(bot.id);
  }

  private watch(botId: number): void {
    let d = this.bots.get(botId);
    if (!d) {
      d = new BotDelivery(botId, this);
      this.bots.set(botId, d);
      const delivery = d;
      const off = this.deps.wakeups.subscribe(topics.updates(botId), () => delivery.kick());
      const stop = delivery.stop.bind(delivery);
      delivery.stop = () => {
        off();
        stop();
      };
    }
    d.kick();
  }

  /** The bot has no webhook any more. */
  drop(botId: number): void {
    this.bots.get(botId)?.stop();
    this.bots.delete(botId);
  }

  stop(): void {
    this.aborter.abort();
    for (const u of this.unsubscribe) u();
    for (const id of [...this.bots.keys()]) this.drop(id);
  }
}
