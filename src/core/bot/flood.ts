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

export class FloodControl {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly policy: FloodPolicy, private readonly now: () => number = () => Date.now()) {}

  private level(key: string, limit: FloodLimit, t: number): Bucket {
    const b = this.buckets.get(key) ?? { tokens: limit.burst, at: t };
    b.tokens = Math.min(limit.burst, b.tokens + ((t - b.at) / 1000) * limit.rate);
    b.at = t;
    return b;
  }

  /** Takes one message from both buckets; returns 0 when allowed, else seconds to wait. */
  take(botId: number, chatId: number): number {
    const t = this.now();
    const checks: [string, FloodLimit][] = [];
    if (this.policy.perChat.rate > 0) checks.push([`${botId}:${chatId}`, this.policy.perChat]);
    if (this.policy.global.rate > 0) checks.push([`${botId}`, this.policy.global]);
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

  /** Forgets full buckets so memory stays bounded. */
  private sweep(t: number): void {
    for (const [key, b] of this.buckets) if (t - b.at > 60_000) this.buckets.delete(key);
  }
}
