import type { NotifyEvent } from './events.js';

/**
 * The outbox port (`Stores.events`). Events are appended in the same
 * transaction as the change that causes them; the append also queues one
 * delivery per enabled endpoint subscribed to the event's type, so nothing
 * committed can be missed and nothing rolled back is ever sent. An event
 * appended outside a transaction is group-committed with others as one row,
 * whose deliveries are queued when it is fanned out: before any claim or
 * listing sees the outbox (src/store/notify/fanout.ts).
 */
export interface EventStore {
  /**
   * Records the event and queues its deliveries; part of the caller's
   * transaction when called on `tx`, else committed (with the appends of
   * concurrent callers, in one row) before it resolves.
   */
  append(event: NotifyEvent): Promise<void>;
  /**
   * Whether an enabled endpoint subscribes to `type`, from memory without
   * waiting (true while unknown or too old to trust).
   */
  subscribed(type: string): boolean;
  /**
   * Whether an enabled endpoint subscribes to `type`, exact: a change of
   * subscriptions answers only once every process would see it, and this
   * reads the database when its memory is older than that (rarely on a busy
   * process, which renews it ahead). The token hot path asks it before
   * recording `token.issued`: the answer is a plain boolean when memory has
   * it, so the common case costs no promise.
   */
  hasSubscriber(type: string): boolean | Promise<boolean>;
  get(id: string): Promise<NotifyEvent | undefined>;
  /** Newest first. */
  list(q: { type?: string; since?: number; limit: number }): Promise<NotifyEvent[]>;
  /** Called after events appended by this process are committed (wakes the worker). */
  onAppended(listener: () => void): () => void;
  /** Deletes attempts, finished deliveries and events older than `before` that nothing pending needs. */
  purge(before: number): Promise<number>;
  endpoints: EndpointStore;
  deliveries: DeliveryStore;
}

/** `email`: the one built-in endpoint e-mail is delivered through (src/core/mail/ports.ts); never listed with the others. */
export type EndpointKind = 'webhook' | 'chat' | 'email';

/** Where notifications go: a webhook URL, or a chat reached through a Bot API. */
export interface Endpoint {
  id: string;
  kind: EndpointKind;
  url: string | null;
  chatId: string | null;
  /** A person's own linked chat: only events about them reach it. */
  userId: string | null;
  /** Event types, or `*` for all. */
  eventTypes: string[];
  description: string | null;
  /** `whsec_…` (Standard Webhooks); during rotation the previous one signs too until it expires. */
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** Deliver one at a time, oldest first (a failing message holds the ones behind it). */
  ordered: boolean;
  disabledAt: number | null;
  disabledReason: string | null;
  /** First failure since the last success. */
  failingSince: number | null;
  createdAt: number;
  updatedAt: number;
}

export type EndpointPatch = Partial<Pick<Endpoint, 'eventTypes' | 'description' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'ordered' | 'disabledAt' | 'disabledReason' | 'failingSince'>>;

export interface EndpointStore {
  create(e: Endpoint): Promise<void>;
  get(id: string): Promise<Endpoint | undefined>;
  list(q?: { userId?: string }): Promise<Endpoint[]>;
  update(id: string, patch: EndpointPatch, now: number): Promise<boolean>;
  /** Deletes the endpoint with its deliveries and attempts. */
  delete(id: string): Promise<boolean>;
}

/** `pending` is queued or waiting for a retry; `failed` is the dead-letter list. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event on its way to one endpoint. */
export interface Delivery {
  endpointId: string;
  eventId: string;
  status: DeliveryStatus;
  /** Attempts made so far, over every round (the delivery log numbers them). */
  attempts: number;
  /** `attempts` when the current round began (a resend or replay starts the schedule again). */
  retryBase: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  deliveredAt: number | null;
}

export interface ClaimedDelivery {
  delivery: Delivery;
  event: NotifyEvent;
  endpoint: Endpoint;
}

/** One try, as the delivery log shows it. */
export interface Attempt {
  endpointId: string;
  eventId: string;
  attempt: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The start of the response body. */
  response: string | null;
  ok: boolean;
}

export interface AttemptOutcome {
  attempt: Attempt;
  next: { status: 'delivered' } | { status: 'pending'; at: number } | { status: 'failed' };
  /** Endpoint bookkeeping: a success clears `failingSince`, a failure sets it when unset. */
  endpointOk: boolean;
  /** Disable the endpoint, dead-letter what it had pending, and record `event` (webhook.disabled). */
  disable?: { reason: string; event: NotifyEvent };
}

export interface DeliveryStore {
  /**
   * Leases up to `limit` due deliveries of enabled endpoints until
   * `now + leaseMs`, atomically across processes (PostgreSQL `FOR UPDATE SKIP
   * LOCKED`; SQLite's single writer), so no two workers send the same attempt.
   * An ordered endpoint offers only its oldest pending delivery.
   */
  claim(now: number, limit: number, leaseMs: number, owner: string): Promise<ClaimedDelivery[]>;
  /**
   * Extends `owner`'s lease on these deliveries to `until` (the worker renews
   * a short lease while it sends, so a dead worker's claims are free again
   * within seconds); a delivery finished or claimed by another is left alone.
   */
  renew(deliveries: { endpointId: string; eventId: string }[], owner: string, until: number): Promise<void>;
  /** Records the attempt and the delivery's next state in one transaction. */
  complete(outcome: AttemptOutcome, now: number): Promise<void>;
  /** `complete` for several attempts in one transaction (the worker batches them). */
  completeMany(outcomes: AttemptOutcome[], now: number): Promise<void>;
  get(endpointId: string, eventId: string): Promise<Delivery | undefined>;
  /** Newest first. */
  list(endpointId: string, q: { status?: DeliveryStatus; since?: number; limit: number }): Promise<Delivery[]>;
  attempts(endpointId: string, eventId: string): Promise<Attempt[]>;
  /** Queues the event for the endpoint again, with a fresh schedule (resend); false when no such event. */
  resend(endpointId: string, eventId: string, now: number): Promise<boolean>;
  /** Queues again every dead-lettered delivery of the endpoint created at or after `since`. */
  replayFailed(endpointId: string, since: number, now: number): Promise<number>;
  /** Dead-letters the endpoint's pending deliveries (it was disabled). */
  failPending(endpointId: string, reason: string, now: number): Promise<number>;
}

/**
 * One-time codes that link a chat to the person who asked for one, signed in
 * (src/core/notify/link-code.ts): kept by SHA-256, single use, short-lived.
 */
export interface LinkCodeStore {
  /** Keeps a new code for the person, replacing their earlier ones (and dropping expired ones). */
  issue(userId: string, codeHash: string, expiresAt: number, now: number): Promise<void>;
  /** Burns the code in one statement: the person it was issued to, or undefined (unknown, used or expired). */
  consume(codeHash: string, now: number): Promise<string | undefined>;
}
