import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { MailAnswer, MailSender, OutgoingMail } from '../core/mail/delivery.js';
import type { MailTransportSetting } from '../settings.js';

/** Where GATEHOUSE_SMTP_URL sends messages: an SMTP server through nodemailer, or the server log (`log:`). */
export interface ClosableMailSender extends MailSender {
  close(): void;
}

/**
 * `log:` is for development: the whole text part (links included) goes to
 * the log at level info, so a developer can follow a verification link
 * without a mail server. Nothing else ever logs a message's contents.
 */
export function logMailSender(log: Pick<Logger, 'info'>): ClosableMailSender {
  return {
    async send(m) {
      log.info({ mail: { from: m.from, to: m.to, subject: m.subject, message_id: m.messageId, text: m.text } }, `e-mail to ${m.to}: ${m.subject} (GATEHOUSE_SMTP_URL=log:)`);
      return { status: 250, retryAfter: undefined, excerpt: 'written to the server log', error: null };
    },
    close() {},
  };
}

/** What nodemailer puts on its errors. */
interface SmtpError {
  message?: string;
  code?: string;
  responseCode?: number;
  response?: string;
}

/**
 * SMTP through nodemailer, over at most a few pooled connections: a burst
 * (an operator inviting a hundred people) queues here rather than opening
 * one connection per message the worker has in flight, which a small
 * server would refuse (421). `smtp://` upgrades with
 * STARTTLS when the server offers it, `smtps://` speaks TLS from the start;
 * certificates are verified. nodemailer's own logger stays off, and every
 * error text that is kept (the delivery log) has the password cut out.
 */
/** Connections to the SMTP server at once (nodemailer's pool; its default is 5). */
const MAX_CONNECTIONS = 4;

export function smtpMailSender(s: Extract<MailTransportSetting, { kind: 'smtp' }>, timeoutMs: number): ClosableMailSender {
  const transporter = nodemailer.createTransport({
    pool: true, maxConnections: MAX_CONNECTIONS,
    host: s.host, port: s.port, secure: s.secure,
    ...(s.user !== undefined ? { auth: { user: s.user, pass: s.pass ?? '' } } : {}),
    connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs,
    logger: false, debug: false,
  });
  const secrets = s.pass ? [s.pass, encodeURIComponent(s.pass)] : [];
  const scrub = (text: string) => secrets.reduce((t, secret) => t.split(secret).join('***'), text);
  return {
    async send(m: OutgoingMail): Promise<MailAnswer> {
      try {
        const info = await transporter.sendMail({
          from: m.from, to: m.to, subject: m.subject, text: m.text, html: m.html, messageId: m.messageId,
          // Nothing in a message may make the sender read a file or fetch a URL.
          disableFileAccess: true, disableUrlAccess: true,
        });
        const response = String((info as { response?: unknown }).response ?? '');
        const code = Number(/^(\d{3})/.exec(response)?.[1] ?? 250);
        return { status: code, retryAfter: undefined, excerpt: scrub(response), error: null };
      } catch (e) {
        const err = (e ?? {}) as SmtpError;
        const status = typeof err.responseCode === 'number' ? err.responseCode : null;
        // RFC 5321 §4.2.1: a 5yz reply is permanent for this message; a refused login is the deployment's to fix, so it waits and retries.
        const permanent = status !== null && status >= 500 && status < 600 && err.code !== 'EAUTH';
        const error = scrub(`${err.code ? `${err.code}: ` : ''}${err.message ?? String(e)}`).slice(0, 500);
        return { status, retryAfter: undefined, excerpt: scrub(err.response ?? ''), error, permanent };
      }
    },
    close() {
      transporter.close();
    },
  };
}

export function mailSender(s: MailTransportSetting, timeoutMs: number, log: Pick<Logger, 'info'>): ClosableMailSender {
  return s.kind === 'log' ? logMailSender(log) : smtpMailSender(s, timeoutMs);
}
