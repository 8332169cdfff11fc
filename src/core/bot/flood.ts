/**
 * Flood control as Telegram applies it to bots: about one message a second
 * into one chat (short bursts tolerated) and about 30 a second overall.
 * Token buckets in process memory; `rate` 0 turns a limit off. A 429 carries
 * the whole seconds until a message would be accepted (retry_after).
 */
export interface FloodLimit {
  /** Messages per second refilled. */
  rate: number;
  /** Messages that may be sent at once. */
  burst: number;
}

export interface FloodPolicy {
  perChat: FloodLimit;
  global: FloodLimit;
}

export const defaultFloodPolicy: FloodPolicy = { perChat: { rate: 1, burst: 20 }, global: { rate: 30, burst: 30 } };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * What the Bot API asks before a message goes into a chat: FloodControl in
 * this process, or the one of a `serve`'s primary that all its workers share
 * (src/infra/cluster-child.ts), hence a promise.
 */
export interface FloodGate {
  take(botId: number, chat: number | string): number | Promise<number>;
  giveBack(botId: number, chat: number | string): void;
}

export class FloodControl implements FloodGate {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly policy: FloodPolicy, private readonly now: () => number = () => Date.now()) {}

  private level(key: string, limit: FloodLimit, t: number): Bucket {
    const b = this.buckets.get(key) ?? { tokens: limit.burst, at: t };
    b.tokens = Math.min(limit.burst, b.tokens + ((t - b.at) / 1000) * limit.rate);
    b.at = t;
    return b;
  }

  private limits(botId: number, chat: number | string): [string, FloodLimit][] {
    const checks: [string, FloodLimit][] = [];
    // A chat named by `@username` has its own bucket: resolving it would cost a read on every message.
    if (this.policy.perChat.rate > 0) checks.push([`${botId}:${String(chat).toLowerCase()}`, this.policy.perChat]);
    if (this.policy.global.rate > 0) checks.push([`${botId}`, this.policy.global]);
    return checks;
  }

  /** Takes one message from both buckets; returns 0 when allowed, else seconds to wait. */
  take(botId: number, chat: number | string): number {
    const t = this.now();
    const checks = this.limits(botId, chat);
    const buckets = checks.map(([key, limit]) => [key, this.level(key, limit, t), limit] as const);
    let wait = 0;
    for (const [, b, limit] of buckets) if (b.tokens < 1) wait = Math.max(wait, (1 - b.tokens) / limit.rate);
    for (const [key, b] of buckets) {
      if (!wait) b.tokens -= 1;
      this.buckets.set(key, b);
    }
    if (this.buckets.size > 100_000) this.sweep(t);
    return wait ? Math.max(1, Math.ceil(wait)) : 0;
  }

  /** Returns a message taken for a call that then failed (nothing was sent). */
  giveBack(botId: number, chat: number | string): void {
    for (const [key, limit] of this.limits(botId, chat)) {
      const b = this.buckets.get(key);
      if (b) b.tokens = Math.min(limit.burst, b.tokens + 1);
    }
  }

  /** Forgets full buckets so memory stays bounded. */
  private sweep(t: number): void {
    for (const [key, b] of this.buckets) if (t - b.at > 60_000) this.buckets.delete(key);
  }
}
