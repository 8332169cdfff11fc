import { conflict, notFound } from '../errors.js';
import type { DeliveryStatus, EventStore } from '../notify/ports.js';
import type { Clock } from '../ports.js';
import { MAIL_ENDPOINT_ID, type MailDelivery, type MailOutbox } from './ports.js';

/**
 * Sends a dead-lettered e-mail again, on a fresh schedule. Only a failed one:
 * what a delivered message said is erased (its links are single use anyway).
 */
export async function resendMail(events: EventStore, clock: Clock, id: string): Promise<void> {
  const d = await events.deliveries.get(MAIL_ENDPOINT_ID, id);
  if (!d) throw notFound('unknown message');
  if (d.status !== 'failed') throw conflict(d.status === 'pending' ? 'the message is still being sent' : 'the message was delivered');
  await events.deliveries.resend(MAIL_ENDPOINT_ID, id, clock.now());
}

/** Sends again every dead-lettered e-mail queued at or after `since`. */
export function replayFailedMail(events: EventStore, clock: Clock, since: number): Promise<number> {
  return events.deliveries.replayFailed(MAIL_ENDPOINT_ID, since, clock.now());
}

/** The console's list: the messages (all, or those of one status) and how many are dead letters. */
export async function mailOverview(mail: Pick<MailOutbox, 'list'>, only?: DeliveryStatus): Promise<{ messages: MailDelivery[]; failed: number }> {
  const [messages, failed] = await Promise.all([
    mail.list({ limit: 100, ...(only ? { status: only } : {}) }),
    only === 'failed' ? undefined : mail.list({ status: 'failed', limit: 100 }),
  ]);
  return { messages, failed: (failed ?? messages).length };
}
