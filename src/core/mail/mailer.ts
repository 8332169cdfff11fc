import { invalidRequest } from '../errors.js';
import { newId } from '../notify/events.js';
import type { Clock } from '../ports.js';
import type { MailOutbox } from './ports.js';
import { composeMail, type MailSite, type MailTemplate, type MailTemplates } from './templates.js';

/** What a caller asks to send. */
export interface MailRequest<T extends MailTemplate> {
  /** One address (`local@domain`), as the account holds it. */
  to: string;
  template: T;
  data: MailTemplates[T];
  /** The account the message is about, if any (the console shows it). */
  userId?: string | null;
}

/** RFC 5321 §4.5.3.1.3: a path is at most 256 octets, so an address at most 254. No spaces, brackets or control characters. */
const ADDRESS = /^[^\s@<>()[\],;:"\\\u0000-\u001f\u007f]+@[^\s@<>()[\],;:"\\\u0000-\u001f\u007f]+\.[^\s@<>()[\],;:"\\\u0000-\u001f\u007f]+$/;

export const isMailAddress = (value: string): boolean => value.length <= 254 && ADDRESS.test(value);

/**
 * The one way to send an e-mail: `enqueue(tx, …)` inside the transaction of
 * the change that causes the message, so the message is committed with it
 * (and never sent for a change that rolled back); the notification worker
 * sends it, retrying while the SMTP server is down (src/core/mail/delivery.ts).
 */
export class Mailer {
  constructor(
    /** GATEHOUSE_SMTP_URL is set (`log:` included): pages that would e-mail say so when it is not. */
    readonly enabled: boolean,
    private readonly clock: Clock,
    readonly site: MailSite,
  ) {}

  /**
   * Queues the message in `tx` and returns its id; undefined (nothing queued)
   * when e-mail is off. A bad address or template data throws here, in the
   * caller's transaction, rather than failing later in the worker.
   */
  async enqueue<T extends MailTemplate>(tx: { mail: MailOutbox }, m: MailRequest<T>): Promise<string | undefined> {
    if (!this.enabled) return undefined;
    if (!isMailAddress(m.to)) throw invalidRequest('not an e-mail address');
    composeMail(m.template, m.data, this.site);
    const now = this.clock.now();
    const id = newId('msg_', now);
    await tx.mail.enqueue({ id, to: m.to, template: m.template, data: m.data, userId: m.userId ?? null, createdAt: now });
    return id;
  }
}
