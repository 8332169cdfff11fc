import type { Delivery, DeliveryStatus } from '../notify/ports.js';
import type { MailTemplate, MailTemplates } from './templates.js';

/**
 * E-mail rides the outbox: a message is an outbox row (`notify_events`, type
 * `mail.message`, holding only its recipient and template) with one delivery
 * to the built-in e-mail endpoint, so the notification worker's leases,
 * retries and dead letters carry it like a webhook. What the message says
 * (links with single-use tokens) is stored apart, encrypted under the secret
 * key, and erased once it is delivered.
 */
export const MAIL_ENDPOINT_ID = 'email';
export const MAIL_EVENT_TYPE = 'mail.message';

/** One message as queued. */
export interface QueuedMail<T extends MailTemplate = MailTemplate> {
  /** The outbox row's id (`msg_…`). */
  id: string;
  to: string;
  template: T;
  data: MailTemplates[T];
  /** The account it is about, when there is one (the console shows it). */
  userId: string | null;
  createdAt: number;
}

/** A message in the console's list: its delivery and whom it goes to. */
export interface MailDelivery {
  delivery: Delivery;
  to: string;
  template: string;
  userId: string | null;
}

/** `Stores.mail`: part of the caller's transaction when taken from `tx`. */
export interface MailOutbox {
  /** Queues the message; it is sent only if the surrounding transaction commits. */
  enqueue(m: QueuedMail): Promise<void>;
  /** What a queued message says; undefined once erased (delivered and purged) or unknown. */
  open(id: string): Promise<QueuedMail | undefined>;
  /** Newest first. */
  list(q: { status?: DeliveryStatus; limit: number }): Promise<MailDelivery[]>;
  /** Erases the contents of delivered messages and of those whose outbox row is gone. */
  purge(): Promise<number>;
}
