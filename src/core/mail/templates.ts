/**
 * The e-mails Gatehouse sends, each written once: a subject, paragraphs and
 * an optional action (a link shown as a button), from which both parts of
 * the message are made (RFC 2046 §5.1.4 multipart/alternative: a text part
 * and an HTML part saying the same). Every value is escaped in the HTML part;
 * nothing a person typed reaches a header but the subject, stripped of
 * control characters.
 */

/** What each template needs; times are epoch milliseconds. */
export interface MailTemplates {
  /** A link that verifies the address it is sent to (sign-up, a change of address). */
  'verify-email': { url: string; expiresMinutes: number; name?: string };
  /** A link that sets a new password (single use). */
  'password-reset': { url: string; expiresMinutes: number; name?: string };
  /** A link to sign up through an invitation. */
  invitation: { url: string; expiresAt: number; invitedBy?: string };
  /** Something changed on the account (sent to its address, whoever made the change). */
  'security-notice': { notice: SecurityNotice; at: number; name?: string };
}

export type SecurityNotice = 'password_changed' | 'account_deleted' | 'email_changed';
export type MailTemplate = keyof MailTemplates;
export const MAIL_TEMPLATES: readonly MailTemplate[] = ['verify-email', 'password-reset', 'invitation', 'security-notice'];

export interface ComposedMail {
  subject: string;
  paragraphs: string[];
  action?: { label: string; url: string };
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** The deployment as a message names it. */
export interface MailSite {
  /** The product name in subjects and signatures. */
  name: string;
  /** {auth_url}: where the account page is. */
  url: string;
}

const greeting = (name: string | undefined) => (name ? `Hello ${name},` : 'Hello,');
const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const NOTICES: Record<SecurityNotice, { subject: string; said: string }> = {
  password_changed: { subject: 'Your password was changed', said: 'The password of your account was changed' },
  account_deleted: { subject: 'Your account was deleted', said: 'Your account was deleted, with the personal data it held' },
  email_changed: { subject: 'Your e-mail address was changed', said: 'The e-mail address of your account was changed; this address no longer receives its messages' },
};

type Composer<T extends MailTemplate> = (data: MailTemplates[T], site: MailSite) => ComposedMail;

const COMPOSERS: { [T in MailTemplate]: Composer<T> } = {
  'verify-email': (d, site) => ({
    subject: `Confirm your e-mail address for ${site.name}`,
    paragraphs: [greeting(d.name), `Follow the link below to confirm that this address is yours. It works once, within ${d.expiresMinutes} minutes.`,
      'If you did not ask for this, ignore this message: the address is not used until it is confirmed.'],
    action: { label: 'Confirm my address', url: d.url },
  }),
  'password-reset': (d, site) => ({
    subject: `Reset your ${site.name} password`,
    paragraphs: [greeting(d.name), `Someone asked to reset the password of your account. Follow the link below to choose a new one. It works once, within ${d.expiresMinutes} minutes.`,
      'If it was not you, ignore this message: your password stays as it is.'],
    action: { label: 'Choose a new password', url: d.url },
  }),
  invitation: (d, site) => ({
    subject: `You are invited to ${site.name}`,
    paragraphs: ['Hello,', `${d.invitedBy ? `${d.invitedBy} invited you` : 'You are invited'} to create an account on ${site.name}. The invitation works once, until ${utc(d.expiresAt)}.`],
    action: { label: 'Create my account', url: d.url },
  }),
  'security-notice': (d, site) => ({
    subject: NOTICES[d.notice].subject,
    paragraphs: [greeting(d.name), `${NOTICES[d.notice].said} on ${utc(d.at)}.`,
      d.notice === 'account_deleted'
        ? 'If you did not do this, contact the administrator of this service.'
        : `If you did not do this, reset your password at ${site.url}/login/forgot and contact the administrator of this service.`],
  }),
};

/** Refuses what must never be sent: an action that is not an http(s) link. */
export function composeMail<T extends MailTemplate>(template: T, data: MailTemplates[T], site: MailSite): ComposedMail {
  const compose = COMPOSERS[template] as Composer<T> | undefined;
  if (!compose) throw new Error(`unknown e-mail template ${String(template)}`);
  const mail = compose(data, site);
  if (mail.action && !isHttpUrl(mail.action.url)) throw new Error(`the ${template} e-mail needs an http(s) link`);
  return mail;
}

function isHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** One line, no control characters: a subject is a header (RFC 5322 §2.2 ends a header at CRLF). */
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();

/** The text and HTML parts of one composed message. */
export function renderMail(mail: ComposedMail, site: MailSite): RenderedMail {
  const subject = oneLine(mail.subject);
  const signature = `— ${site.name}`;
  const text = [
    ...mail.paragraphs,
    ...(mail.action ? [`${mail.action.label}:\n${mail.action.url}`] : []),
    signature,
  ].join('\n\n') + '\n';
  const p = (s: string) => `<p style="margin:0 0 16px">${escapeHtml(s)}</p>`;
  const action = mail.action
    ? `<p style="margin:24px 0"><a href="${escapeHtml(mail.action.url)}" style="background:#1f4fd1;color:#ffffff;padding:12px 20px;border-radius:6px;text-decoration:none;display:inline-block">${escapeHtml(mail.action.label)}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#555">If the button does not work, open this link: <a href="${escapeHtml(mail.action.url)}" style="color:#1f4fd1;word-break:break-all">${escapeHtml(mail.action.url)}</a></p>`
    : '';
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:15px;line-height:1.5;color:#1a1a1a">
${mail.paragraphs.map(p).join('\n')}
${action}
<p style="margin:24px 0 0;color:#555">${escapeHtml(signature)}</p>
</body></html>
`;
  return { subject, text, html };
}
