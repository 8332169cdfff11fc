import { LocalWakeups, TopicCounts, type Wakeups } from '../core/bot/wakeups.js';
import type { DeliveryLease } from '../core/bot/bot-webhooks.js';
import { FloodControl, type FloodGate, type FloodPolicy } from '../core/bot/flood.js';
import type { EventStore } from '../core/notify/ports.js';
import type { ProcessLinks } from '../gatehouse.js';
import { Outbox, unbatch, type ToPrimary, type ToWorker } from './cluster-protocol.js';
import type { ServedUrls } from './ready-line.js';

/** The IPC channel to the primary (process.send / process.on('message') in a cluster worker). */
export interface PrimaryChannel {
  send(m: ToPrimary): void;
  onMessage(fn: (m: ToWorker) => void): void;
}

/** The cluster worker's channel; what one turn of the event loop sends goes as one IPC message. */
export function processChannel(): PrimaryChannel {
  const outbox = new Outbox<ToPrimary>((m) => {
    // The channel closes when the primary is gone; the worker is stopping then anyway.
    if (process.connected) process.send!(m);
  });
  return {
    // A wake-up goes at once: the primary must have it before the answer of the request that
    // published it reaches its client. A getUpdates answered, then a newer one subscribing through
    // another worker before the older one's `poll` arrived, would be ended by it with 409.
    send: (m) => outbox.send(m, m.gh === 'pub'),
    onMessage: (fn) => process.on('message', (m) => {
      for (const one of unbatch<ToWorker>(m)) fn(one);
    }),
  };
}

/**
 * Long-poll wake-ups between the workers of one `serve` without Redis: a
 * publish wakes this worker's waiters at once and goes to the primary, which
 * passes it to the workers subscribed to the topic. A worker tells the
 * primary when it starts and stops listening on a topic; `ready()` resolves
 * once the primary has routed every topic subscribed so far here, so a
 * waiter that subscribes, awaits `ready()` and then reads storage misses no
 * update committed elsewhere (the primary handles messages in order).
 */
export class ClusterWakeups implements Wakeups {
  private readonly local = new LocalWakeups();
  private readonly counts = new TopicCounts();
  private readonly acks = new Map<number, () => void>();
  private nextId = 1;
  private pending: Promise<unknown> = Promise.resolve();

  constructor(private readonly channel: PrimaryChannel) {}

  /** A message from the primary (ClusterLinks dispatches them). */
  received(m: ToWorker): void {
    if (m.gh === 'pub') this.local.publish(m.topic, m.message);
    else if (m.gh === 'ack') {
      this.acks.get(m.id)?.();
      this.acks.delete(m.id);
    }
  }

  publish(topic: string, message = '', local?: unknown): void {
    this.local.publish(topic, message, local);
    this.channel.send({ gh: 'pub', topic, message });
  }

  subscribe(topic: string, listener: (message: string, local?: unknown) => void): () => void {
    return this.counts.add(topic, this.local.subscribe(topic, listener), () => {
      const id = this.nextId++;
      const acked = new Promise<void>((resolve) => this.acks.set(id, resolve));
      this.pending = Promise.all([this.pending, acked]);
      this.channel.send({ gh: 'sub', topic, id });
    }, () => this.channel.send({ gh: 'unsub', topic }));
  }

  async ready(): Promise<void> {
    await this.pending;
  }

  async close(): Promise<void> {
    await this.local.close();
    for (const resolve of this.acks.values()) resolve();
    this.acks.clear();
  }
}

/** Request and answer over the channel, by id. */
class Requests<T> {
  private readonly waiting = new Map<number, (v: T) => void>();
  private nextId = 1;

  ask(send: (id: number) => void): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve) => {
      this.waiting.set(id, resolve);
      send(id);
    });
  }

  answer(id: number, v: T): void {
    this.waiting.get(id)?.(v);
    this.waiting.delete(id);
  }

  /** The primary went away: nobody will answer; `v` for everyone waiting. */
  drain(v: T): void {
    for (const resolve of this.waiting.values()) resolve(v);
    this.waiting.clear();
  }
}

/**
 * A worker's links to its primary: wake-ups (used when there is no Redis),
 * bots' webhook delivery leases (likewise), flood control (always: Telegram's
 * limits are per bot and chat, not per process), and outbox wake-ups for the
 * worker that runs the notification role.
 */
export class ClusterLinks {
  readonly wakeups: ClusterWakeups;
  private readonly floods = new Requests<number>();
  private readonly leases = new Requests<boolean>();
  private readonly outboxListeners = new Set<() => void>();
  private outboxQueued = false;
  private preparedWaiters: (() => void)[] = [];

  /** With flood control off (both rates 0) there is nothing to share: the primary is not asked. */
  readonly flood: FloodGate;

  constructor(private readonly channel: PrimaryChannel, floodPolicy: FloodPolicy) {
    this.wakeups = new ClusterWakeups(channel);
    this.flood = floodPolicy.perChat.rate > 0 || floodPolicy.global.rate > 0 ? {
      take: (botId, chat) => this.floods.ask((id) => this.channel.send({ gh: 'flood', id, botId, chat })),
      giveBack: (botId, chat) => this.channel.send({ gh: 'flood-back', botId, chat }),
    } : new FloodControl(floodPolicy);
    channel.onMessage((m) => {
      if (m.gh === 'flood') this.floods.answer(m.id, m.wait);
      else if (m.gh === 'lease') this.leases.answer(m.id, m.ok);
      else if (m.gh === 'outbox') for (const l of [...this.outboxListeners]) l();
      else if (m.gh === 'prepared') for (const resolve of this.preparedWaiters.splice(0)) resolve();
      else this.wakeups.received(m);
    });
  }

  readonly lease: DeliveryLease = {
    acquire: (botId, ms) => this.leases.ask((id) => this.channel.send({ gh: 'lease', id, botId, ms })),
  };

  /** Slot 1: the database is migrated, the signing key and BotFather made; the other slots may open it. */
  announcePrepared(someone: boolean): void {
    this.channel.send({ gh: 'prepared', someone });
  }

  /** The other slots: resolves once slot 1 prepared the database (at once when it did before this worker started). */
  prepared(): Promise<void> {
    return new Promise((resolve) => {
      this.preparedWaiters.push(resolve);
      this.channel.send({ gh: 'await-prepared' });
    });
  }

  /** This worker serves: the URLs its listeners got. */
  ready(urls: ServedUrls): void {
    this.channel.send({ gh: 'ready', ...urls });
  }

  /** What createBotInterface takes: with Redis, its wake-ups and leases win (they reach other hosts too). */
  forBots(): ProcessLinks {
    return { wakeups: this.wakeups, lease: this.lease, flood: this.flood };
  }

  /** Tells the primary when events commit here (coalesced per turn of the event loop). */
  reportOutbox(events: Pick<EventStore, 'onAppended'>): () => void {
    return events.onAppended(() => {
      if (this.outboxQueued) return;
      this.outboxQueued = true;
      setImmediate(() => {
        this.outboxQueued = false;
        this.channel.send({ gh: 'outbox' });
      });
    });
  }

  /**
   * `events` whose onAppended also fires when another worker committed
   * events, for the notification worker (it otherwise finds them at its next
   * sweep, up to a second later).
   */
  withOutboxWakes<E extends Pick<EventStore, 'onAppended'>>(events: E): E {
    const outboxListeners = this.outboxListeners;
    return Object.create(events, {
      onAppended: {
        value: (listener: () => void) => {
          const off = events.onAppended(listener);
          outboxListeners.add(listener);
          return () => {
            off();
            outboxListeners.delete(listener);
          };
        },
      },
    }) as E;
  }

  /** The primary is gone: answer whoever waits (no flood limit, no lease). */
  close(): void {
    this.floods.drain(0);
    this.leases.drain(false);
    for (const resolve of this.preparedWaiters.splice(0)) resolve();
  }
}
