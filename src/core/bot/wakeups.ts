/**
 * Wake-ups for long polls: a waiting getUpdates (or a person's chat poll)
 * subscribes to a topic and the writer publishes on it right after commit.
 * No database polling. The in-process hub serves a single process; a Redis
 * pub/sub implementation (src/store/bot/redis-wakeups.ts) carries the same
 * topics between processes.
 */
export interface Wakeups {
  /**
   * `local` goes as it is to this process's listeners only, never to other
   * processes (a listener woken from elsewhere gets none and reads storage):
   * what the publisher just committed, so a waiter here need not read it back.
   */
  publish(topic: string, message?: string, local?: unknown): void;
  /** Returns the unsubscribe function. */
  subscribe(topic: string, listener: (message: string, local?: unknown) => void): () => void;
  /** Resolves once every subscription made so far receives messages (Redis confirms them asynchronously). */
  ready(): Promise<void>;
  /** True while wake-ups from other processes may be lost (Redis away): waiters then also re-read storage. */
  degraded?(): boolean;
  /** While degraded, how often waiters re-read storage (default DEGRADED_POLL_MS). */
  degradedPollMs?(): number;
  close(): Promise<void>;
}

export const topics = {
  /** New updates for a bot (long polls and the webhook deliverer wait on it). */
  updates: (botId: number) => `bot:${botId}:updates`,
  /** A getUpdates started; the message is its id, so older polls end with 409. */
  poll: (botId: number) => `bot:${botId}:poll`,
  /** New or changed messages in a private chat (the person's client polls it); the message is `chatChange`'s. */
  chat: (botId: number, chatId: number) => `chat:${botId}:${chatId}`,
  /** A callback query was answered (the person's press request waits on it). */
  callback: (queryId: string) => `callback:${queryId}`,
  /** A bot's webhook was set or deleted; the message is the bot id. */
  webhooks: 'bots:webhooks',
};

/** What changed in a chat: a new message's id, or `edit:<id>` / `delete:<id>` (a poll that started before shows them). */
export const chatChange = {
  added: (messageId: number) => String(messageId),
  edited: (messageId: number) => `edit:${messageId}`,
  deleted: (messageId: number) => `delete:${messageId}`,
  parse(message: string): { kind: 'added' | 'edited' | 'deleted'; messageId: number } | undefined {
    const m = /^(?:(edit|delete):)?(\d{1,15})$/.exec(message);
    if (!m) return undefined;
    return { kind: m[1] === 'edit' ? 'edited' : m[1] === 'delete' ? 'deleted' : 'added', messageId: Number(m[2]) };
  },
};

export class LocalWakeups implements Wakeups {
  private readonly listeners = new Map<string, Set<(m: string, local?: unknown) => void>>();

  publish(topic: string, message = '', local?: unknown): void {
    const set = this.listeners.get(topic);
    if (!set) return;
    for (const fn of [...set]) fn(message, local);
  }

  subscribe(topic: string, listener: (message: string, local?: unknown) => void): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(topic) === set) this.listeners.delete(topic);
    };
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {
    this.listeners.clear();
  }
}

/** While wake-ups are degraded, a waiter returns this often so its caller reads storage again. */
export const DEGRADED_POLL_MS = 500;

/**
 * How long a relayed topic stays subscribed after its last local subscriber
 * left: a bot's next getUpdates (or a person's next poll) follows the last
 * one's answer at once, and finds the topic still routed here, without a
 * round trip to the relay (Redis SUBSCRIBE, the cluster primary's
 * acknowledgement) before it may read storage.
 */
export const LINGER_MS = 5_000;

/**
 * Local subscribers counted per topic, for wake-ups relayed from elsewhere
 * (Redis, the cluster primary): the relay hears of a topic when its first
 * subscriber comes (`first`) and, LINGER_MS after its last one left with
 * nobody come back meanwhile, that it is gone (`last`). `topics()` lists the
 * lingering ones too (they are still subscribed at the relay). The function
 * returned unsubscribes once however often it is called.
 */
export class TopicCounts {
  private readonly counts = new Map<string, { n: number; linger?: ReturnType<typeof setTimeout> }>();

  constructor(private readonly lingerMs = LINGER_MS) {}

  topics(): IterableIterator<string> {
    return this.counts.keys();
  }

  add(topic: string, off: () => void, first: () => void, last: () => void): () => void {
    let entry = this.counts.get(topic);
    if (entry) {
      entry.n++;
      clearTimeout(entry.linger);
      entry.linger = undefined;
    } else {
      this.counts.set(topic, (entry = { n: 1 }));
      first();
    }
    const mine = entry;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      off();
      if (--mine.n > 0 || this.counts.get(topic) !== mine) return;
      const gone = () => {
        if (mine.n > 0 || this.counts.get(topic) !== mine) return;
        this.counts.delete(topic);
        last();
      };
      if (this.lingerMs <= 0) return gone();
      mine.linger = setTimeout(gone, this.lingerMs);
      mine.linger.unref?.();
    };
  }
}

/**
 * Waits until a message arrives on one of `topicList`, `ms` passes or
 * `signal` aborts, whichever is first. Subscribe *before* checking storage
 * and pass the subscription in, so nothing published in between is lost.
 */
export class Waiter {
  private wake: (() => void) | undefined;
  private fired = false;
  private readonly unsubscribe: (() => void)[];

  constructor(private readonly wakeups: Wakeups, topicList: string[], private readonly onMessage?: (topic: string, message: string, local?: unknown) => boolean) {
    this.unsubscribe = topicList.map((t) => wakeups.subscribe(t, (m, local) => {
      if (this.onMessage && !this.onMessage(t, m, local)) return;
      this.fired = true;
      this.wake?.();
    }));
  }

  /** Await before reading storage: from then on nothing published is missed. */
  ready(): Promise<void> {
    return this.wakeups.ready();
  }

  /**
   * Resolves true when woken by a message, false on timeout or abort. While
   * the wake-ups are degraded it also resolves true every half second (or
   * the wake-ups' own `degradedPollMs`), so the caller falls back to short
   * polling of storage until they recover.
   */
  wait(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.fired) {
      this.fired = false;
      return Promise.resolve(true);
    }
    if (ms <= 0 || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.wake = undefined;
        if (woken) this.fired = false;
        resolve(woken);
      };
      const onAbort = () => done(false);
      const every = this.wakeups.degraded?.() === true ? (this.wakeups.degradedPollMs?.() ?? DEGRADED_POLL_MS) : 0;
      const timer = every > 0 && ms > every ? setTimeout(() => done(true), every) : setTimeout(() => done(false), ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.wake = () => done(true);
    });
  }

  close(): void {
    for (const u of this.unsubscribe) u();
  }
}
