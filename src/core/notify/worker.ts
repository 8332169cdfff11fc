import { randomUUID } from 'node:crypto';
import type { Clock } from '../ports.js';
import { GroupCommit } from '../group-commit.js';
import { chatText, readBotAnswer, sendMessageRequest, type ChatChannelConfig } from './chat.js';
import { oneTapButtons } from './one-tap.js';
import { deliveryBody, newEvent, rfc3339, type NotifyEvent } from './events.js';
import type { AttemptOutcome, ClaimedDelivery, EventStore } from './ports.js';
import { parseRetryAfter } from '../outbound.js';
import { DISABLE_AFTER_MS, nextAttemptAt } from './schedule.js';
import { signedHeaders } from './signing.js';
import type { HttpAnswer, Transport } from './transport.js';
import { judgeMail, type MailChannel } from '../mail/delivery.js';

export interface WorkerOptions {
  /** Deliveries in flight at once. */
  concurrency: number;
  /** A receiver gets this long to answer (Standard Webhooks: 2xx within a timeout). */
  timeoutMs: number;
  /** How often to look for work committed by other processes, and for retries coming due. */
  sweepMs: number;
  /** How long a claim holds without renewal (the pickup time after a crash). */
  leaseMs: number;
}

export interface WorkerDeps {
  events: EventStore;
  clock: Clock;
  /** Webhook requests: refuses private addresses unless the deployment allows them. */
  webhooks: Transport;
  /** Bot API requests, to a base URL the operator configured. */
  chats: Transport;
  chat: ChatChannelConfig | undefined;
  /** E-mail (GATEHOUSE_SMTP_URL): deliveries to the built-in e-mail endpoint wait while unset. */
  mail?: MailChannel | undefined;
  /** An app's name, for chat messages about events that carry only its client_id. */
  clientName?: (clientId: string) => Promise<string | undefined>;
  random?: () => number;
  /** Names this worker in the leases it holds (unique per worker; a random id by default). */
  owner?: string;
  log?: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

const NO_MAIL: HttpAnswer = { status: null, retryAfter: undefined, excerpt: '', error: 'e-mail is not configured (GATEHOUSE_SMTP_URL)' };

/** Claims under way at once. */
const MAX_CLAIMS = 2;

export const defaultWorkerOptions: WorkerOptions = { concurrency: 64, timeoutMs: 15_000, sweepMs: 1000, leaseMs: 5000 };

/**
 * The outbox worker (role `worker`). Claims due deliveries with a lease,
 * sends them, records every attempt, and schedules retries. It wakes as soon
 * as this process commits an event and sweeps every `sweepMs` for the rest, so
 * several processes can share the work; a crash leaves leases that expire
 * and are claimed again (at-least-once: receivers dedupe by `webhook-id`).
 */
export class DeliveryWorker {
  private readonly owner: string;
  /** Every delivery claimed and not yet recorded, as the promise of its whole course (stop() waits for them). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Claimed, waiting for a sending slot: the next claim's round trip overlaps the sends of this one. */
  private readonly ready: ClaimedDelivery[] = [];
  /** Requests on the wire (at most `concurrency`). */
  private sending = 0;
  /** Claims under way, and how many deliveries they asked for. */
  private readonly claims = new Set<Promise<void>>();
  private asked = 0;
  /** Work was signalled while two claims were under way: look again when one ends. */
  private again = false;
  /**
   * An event was committed (or the sweep came) while a claim was under way:
   * that claim may have read before the commit, so look again when it ends
   * (a claim begun since clears it). Only outside signals set it — a poke from
   * a finished send or claim must not, or the worker would claim in a loop
   * while sends are in flight.
   */
  private signalled = false;
  /**
   * Outside signals, and claims that came back full, so far: a claim that
   * came back short leaves the worker drained only when neither happened
   * while it ran (on PostgreSQL a claim skips the rows another one is
   * locking, so it may come back short beside one that found more).
   */
  private signals = 0;
  private fulls = 0;
  /**
   * The last claim found less than it asked for, and nothing outside this
   * worker's course has signalled since: a finished delivery then claims no
   * more until a commit or the sweep says there may be work. Without it,
   * under a steady flow every finished delivery began a claim that came back
   * all but empty (SQLite, webhooks-max: 4,190 claims for 3,515 deliveries,
   * each walking past the rows leased in flight, more CPU than the deliveries).
   */
  private drained = false;
  private stopped = true;
  private sweep: ReturnType<typeof setInterval> | undefined;
  private renewal: ReturnType<typeof setInterval> | undefined;
  /** Claimed and not yet recorded: the leases to renew. */
  private readonly held = new Set<ClaimedDelivery>();
  private unsubscribe: (() => void) | undefined;
  private readonly opts: WorkerOptions;
  private readonly random: () => number;

  constructor(private readonly deps: WorkerDeps, opts: Partial<WorkerOptions> = {}) {
    this.opts = { ...defaultWorkerOptions, ...opts };
    this.owner = deps.owner ?? randomUUID();
    this.random = deps.random ?? Math.random;
  }

  /**
   * Short, and renewed every third of it while the attempt is in flight: a
   * crashed worker's claims are taken over within seconds, a live worker's
   * never, however long its receivers take to answer.
   */
  get leaseMs(): number {
    return this.opts.leaseMs;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.drained = false;
    this.unsubscribe = this.deps.events.onAppended(() => this.signal());
    this.sweep = setInterval(() => this.signal(), this.opts.sweepMs);
    this.sweep.unref();
    this.renewal = setInterval(() => this.renew(), this.opts.leaseMs / 3);
    this.renewal.unref();
    this.poke();
  }

  /** Work may have come from outside this worker's own course (a commit, the sweep). */
  private signal(): void {
    this.signals++;
    this.drained = false;
    if (this.claims.size > 0) this.signalled = true;
    this.poke();
  }

  /**
   * Look for work now. Claims keep ahead of the sends: `concurrency` on the
   * wire and up to twice as many more claimed and waiting, so a slot freed by
   * an answer is filled at once rather than after a claim's round trip; two
   * claims may be under way at once (on PostgreSQL each skips the rows the
   * other is locking), so a backlog is not drained at the pace of one claim's
   * round trip. What is claimed and not yet recorded stays bounded (and
   * leased, and renewed).
   */
  poke(): void {
    if (this.stopped) return;
    const { concurrency } = this.opts;
    for (;;) {
      if (this.claims.size >= MAX_CLAIMS) {
        this.again = true;
        return;
      }
      const want = Math.min(3 * concurrency - this.sending - this.ready.length, 4 * concurrency - this.held.size) - this.asked;
      // Claim in batches: one query per finished delivery would cost more than the deliveries.
      if (this.drained || want <= 0 || ((this.held.size > 0 || this.asked > 0) && want < concurrency)) return;
      this.asked += want;
      // This claim reads after every signal so far.
      this.signalled = false;
      const seen = this.signals + this.fulls;
      let full = false;
      const p: Promise<void> = this.claim(want).then((n) => {
        full = n === want;
        if (full) {
          this.fulls++;
          this.drained = false;
        } else if (this.signals + this.fulls === seen) {
          this.drained = true;
        }
      })
        .catch((err) => this.deps.log?.warn({ err }, 'notification worker: claiming failed'))
        .finally(() => {
          this.asked -= want;
          this.claims.delete(p);
          // Look again when this claim found more than it could take, or when work was signalled meanwhile.
          if (full || this.again || this.signalled) {
            this.again = false;
            this.poke();
          }
        });
      this.claims.add(p);
    }
  }

  private async claim(want: number): Promise<number> {
    const claimed = await this.deps.events.deliveries.claim(this.deps.clock.now(), want, this.leaseMs, this.owner);
    for (const c of claimed) this.held.add(c);
    this.ready.push(...claimed);
    this.startSends();
    return claimed.length;
  }

  private startSends(): void {
    while (this.sending < this.opts.concurrency && this.ready.length) this.track(this.deliver(this.ready.shift()!));
  }

  private track(p: Promise<void>): void {
    const done = p.catch((err) => this.deps.log?.warn({ err }, 'notification worker: recording an attempt failed')).finally(() => {
      this.inFlight.delete(done);
      this.poke();
    });
    this.inFlight.add(done);
  }

  /**
   * Claims and sends everything due now, waits for every attempt to be
   * recorded, and returns how many were attempted (tests drive time with it).
   */
  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.deps.events.deliveries.claim(this.deps.clock.now(), this.opts.concurrency, this.leaseMs, this.owner);
      if (claimed.length === 0) return total;
      total += claimed.length;
      for (const c of claimed) this.held.add(c);
      await Promise.all(claimed.map((c) => this.deliver(c)));
    }
  }

  /** Stops claiming and waits for the attempts in flight and those already claimed (bounded by the request timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweep);
    this.unsubscribe?.();
    // Renewal goes on until the attempts in flight are recorded.
    while (this.claims.size) await Promise.all([...this.claims]);
    while (this.inFlight.size || this.ready.length) {
      this.startSends();
      await Promise.all([...this.inFlight]);
    }
    clearInterval(this.renewal);
  }

  /** Sends one claimed delivery and records the attempt; the caller has put it in `held`. */
  async deliver(c: ClaimedDelivery): Promise<void> {
    this.held.add(c);
    this.sending++;
    let sent = false;
    try {
      const startedAt = this.deps.clock.now();
      const t0 = performance.now();
      const answer = await this.send(c, startedAt);
      const durationMs = Math.round(performance.now() - t0);
      // The slot is free once the answer is in: recording is batched with the others finishing now.
      sent = true;
      this.sending--;
      this.startSends();
      this.poke();
      await this.record(this.judge(c, answer, startedAt, durationMs));
    } finally {
      if (!sent) {
        this.sending--;
        this.startSends();
      }
      this.held.delete(c);
    }
  }

  /** One statement for every claim held; a failure is retried on the next tick, well within the lease. */
  private renew(): void {
    if (this.held.size === 0) return;
    const held = [...this.held].map((c) => ({ endpointId: c.endpoint.id, eventId: c.event.id }));
    this.deps.events.deliveries.renew(held, this.owner, this.deps.clock.now() + this.opts.leaseMs)
      .catch((err) => this.deps.log?.warn({ err }, 'notification worker: renewing leases failed'));
  }

  /**
   * Attempts finishing together are written together (one statement on
   * PostgreSQL, one transaction on SQLite), which is what lets one worker
   * keep up with thousands of deliveries a second. The write waits for the
   * end of this turn of the event loop, so the answers read in the same turn
   * share it (on SQLite the write itself is synchronous: without the wait
   * every attempt was a commit of its own). Two writes may be under way at
   * once, so the next batch is not held up by a commit's wait for the disk.
   * A failed write fails its batch (logged; each delivery is claimed again once its lease runs out).
   */
  private readonly records = new GroupCommit<AttemptOutcome, void>(async (outcomes) => {
    await this.deps.events.deliveries.completeMany(outcomes, this.deps.clock.now());
    return [];
  }, { maxInFlight: 2, maxGroup: 256, onFailure: 'fail-group' });

  private record(outcome: AttemptOutcome): Promise<void> {
    return this.records.submit(outcome);
  }

  private async send(c: ClaimedDelivery, now: number): Promise<HttpAnswer> {
    const { endpoint, event } = c;
    if (endpoint.kind === 'email') return this.deps.mail ? this.deps.mail.send(event.id) : NO_MAIL;
    if (endpoint.kind === 'chat') {
      if (!this.deps.chat) return { status: null, retryAfter: undefined, excerpt: '', error: 'chat notifications are not configured (GATEHOUSE_NOTIFY_BOT_TOKEN)' };
      // A person's own chat gets the alert's one-tap buttons (src/core/notify/one-tap.ts).
      const buttons = endpoint.userId ? oneTapButtons(event) : undefined;
      // The sentence names the app, never its client_id (src/core/notify/sentences.ts).
      const id = event.data.client_id;
      const clientName = typeof id === 'string' && typeof event.data.client_name !== 'string' ? await this.deps.clientName?.(id).catch(() => undefined) : undefined;
      const text = chatText(event, { clientName, buttons: buttons?.flat().map((b) => b.text) });
      return this.deps.chats.post(sendMessageRequest(this.deps.chat, endpoint.chatId ?? '', text, this.opts.timeoutMs, buttons));
    }
    const body = this.bodyOf(event);
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && (endpoint.previousSecretExpiresAt ?? 0) > now) secrets.push(endpoint.previousSecret);
    return this.deps.webhooks.post({
      url: endpoint.url ?? '',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Gatehouse-Webhooks/1',
        'gatehouse-event-version': String(event.version),
        ...signedHeaders(secrets, event.id, Math.floor(now / 1000), body),
      },
      body,
      timeoutMs: this.opts.timeoutMs,
    });
  }

  /** One body per message, whichever endpoints it goes to (a claim hands their deliveries the same event object). */
  private readonly bodies = new WeakMap<NotifyEvent, string>();
  private bodyOf(event: NotifyEvent): string {
    let body = this.bodies.get(event);
    if (body === undefined) {
      body = deliveryBody(event);
      this.bodies.set(event, body);
    }
    return body;
  }

  /** Success, retry, dead letter, or disable the endpoint (Standard Webhooks' status semantics). */
  judge(c: ClaimedDelivery, a: HttpAnswer, now: number, durationMs: number): AttemptOutcome {
    if (c.endpoint.kind === 'email') return judgeMail(c, a, now, durationMs, this.random);
    const { endpoint, delivery } = c;
    const number = delivery.attempts + 1;
    let ok: boolean;
    let retryAfterMs = parseRetryAfter(a.retryAfter, now);
    let unreachable = false;
    if (endpoint.kind === 'chat') {
      const r = readBotAnswer(a);
      ok = r.ok;
      unreachable = r.unreachable;
      if (r.retryAfterSeconds !== undefined) retryAfterMs = r.retryAfterSeconds * 1000;
    } else {
      ok = a.status !== null && a.status >= 200 && a.status < 300;
      // 410 Gone: the receiver asks us to stop for good.
      unreachable = a.status === 410;
    }
    const attempt = {
      endpointId: endpoint.id, eventId: c.event.id, attempt: number, startedAt: now, durationMs,
      statusCode: a.status, error: a.error, response: a.excerpt ? a.excerpt.slice(0, 1000) : null, ok,
    };
    if (ok) return { attempt, next: { status: 'delivered' }, endpointOk: true };

    const failingFor = endpoint.failingSince === null ? 0 : now - endpoint.failingSince;
    const reason = unreachable ? (endpoint.kind === 'chat' ? 'chat_unreachable' : 'gone') : failingFor >= DISABLE_AFTER_MS ? 'failing' : undefined;
    if (reason) {
      const event = newEvent('webhook.disabled', {
        endpoint_id: endpoint.id, url: endpoint.url, chat_id: endpoint.chatId, reason: reason as 'gone' | 'failing' | 'chat_unreachable',
        failing_since: endpoint.failingSince === null ? null : rfc3339(endpoint.failingSince),
      }, now);
      return { attempt, next: { status: 'failed' }, endpointOk: false, disable: { reason, event } };
    }
    const at = nextAttemptAt(number - delivery.retryBase, now, this.random, retryAfterMs);
    return { attempt, next: at === undefined ? { status: 'failed' } : { status: 'pending', at }, endpointOk: false };
  }
}
