import type { AttemptOutcome, ClaimedDelivery } from '../notify/ports.js';
import { nextAttemptAt } from '../notify/schedule.js';
import type { HttpAnswer } from '../notify/transport.js';
import type { MailOutbox } from './ports.js';
import { composeMail, renderMail, type MailSite } from './templates.js';

/** One message as the SMTP transport takes it. */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The same for every attempt at one message (RFC 5322 §3.6.4), so a copy sent twice can be recognised. */
  messageId: string;
}

/**
 * An attempt's outcome in the delivery log's terms: `status` is the SMTP
 * reply code (250 accepted) or null when none came; `permanent` when trying
 * again cannot help (a 5xx reply, RFC 5321 §4.2.1).
 */
export interface MailAnswer extends HttpAnswer {
  permanent?: boolean;
}

/** The SMTP server (or the log) a message goes to: src/infra/mail-transport.ts. */
export interface MailSender {
  send(m: OutgoingMail): Promise<MailAnswer>;
}

/** What the notification worker calls for a delivery to the e-mail endpoint. */
export interface MailChannel {
  send(messageId: string): Promise<MailAnswer>;
}

const failure = (error: string, permanent: boolean): MailAnswer => ({ status: null, retryAfter: undefined, excerpt: '', error, permanent });

/** Opens the queued message, renders both parts from its template, and hands it to the sender. */
export function mailChannel(deps: { outbox: MailOutbox; sender: MailSender; from: string; site: MailSite }): MailChannel {
  const domain = /@([^>\s]+)>?\s*$/.exec(deps.from)?.[1] ?? 'gatehouse.invalid';
  return {
    async send(id) {
      const queued = await deps.outbox.open(id);
      if (!queued) return failure('the message was erased (delivered before, or purged)', true);
      let rendered;
      try {
        rendered = renderMail(composeMail(queued.template, queued.data, deps.site), deps.site);
      } catch (e) {
        return failure(`cannot render the message: ${(e as Error).message}`, true);
      }
      return deps.sender.send({ from: deps.from, to: queued.to, ...rendered, messageId: `<${id}@${domain}>` });
    },
  };
}

/**
 * Delivered on a 2xx reply; dead-lettered at once on a permanent failure,
 * else retried on the outbox's schedule (src/core/notify/schedule.ts) and
 * dead-lettered once it is exhausted. The e-mail endpoint is never disabled:
 * a failing SMTP server holds its messages until it is back, or until their
 * schedule ends (they can be replayed from the console).
 */
export function judgeMail(c: ClaimedDelivery, a: MailAnswer, now: number, durationMs: number, random: () => number): AttemptOutcome {
  const { endpoint, delivery } = c;
  const number = delivery.attempts + 1;
  const ok = a.status !== null && a.status >= 200 && a.status < 300;
  const attempt = {
    endpointId: endpoint.id, eventId: c.event.id, attempt: number, startedAt: now, durationMs,
    statusCode: a.status, error: a.error, response: a.excerpt ? a.excerpt.slice(0, 1000) : null, ok,
  };
  if (ok) return { attempt, next: { status: 'delivered' }, endpointOk: true };
  const at = a.permanent ? undefined : nextAttemptAt(number - delivery.retryBase, now, random);
  // A server that answered is up, whatever it said of this message.
  return { attempt, next: at === undefined ? { status: 'failed' } : { status: 'pending', at }, endpointOk: a.status !== null };
}
