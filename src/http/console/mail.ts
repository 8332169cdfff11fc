import type { FastifyInstance } from 'fastify';
import { mailOverview, replayFailedMail, resendMail } from '../../core/mail/admin.js';
import type { MailDelivery } from '../../core/mail/ports.js';
import { DELIVERY_STATUSES } from '../../core/notify/endpoints.js';
import type { DeliveryStatus } from '../../core/notify/ports.js';
import { invalidRequest } from '../../core/errors.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { paramsOf } from '../input.js';
import { html, raw, type Raw } from '../pages/html.js';
import { adminGate, csrfField, field, form, PAGE, pathId, refusal, type AdminRequest } from './guard.js';
import { when } from './layout.js';

/** The replay form's choices, seconds back from now. */
const WINDOWS = [['3600', 'the last hour'], ['86400', 'the last 24 hours'], ['604800', 'the last 7 days']] as const;

/** Where messages go, without the SMTP credentials. */
function transportOf(gh: Gatehouse): string {
  const s = gh.config.smtp;
  if (!s) return 'off: GATEHOUSE_SMTP_URL is unset, so nothing is e-mailed';
  if (s.kind === 'log') return 'the server log (GATEHOUSE_SMTP_URL=log:, for development)';
  return `${s.secure ? 'SMTP over TLS' : 'SMTP'} to ${s.host}:${s.port}, from ${gh.config.mailFrom}`;
}

function row(m: MailDelivery, csrf: string): Raw {
  const d = m.delivery;
  const action = `/admin/mail/messages/${encodeURIComponent(d.eventId)}/resend`;
  return html`<tr><td data-label="Message" class="mono">${d.eventId}</td><td data-label="To">${m.to}</td><td data-label="Template">${m.template}</td>
<td data-label="Status"${d.status === 'failed' ? raw(' class="status-failed"') : ''}>${d.status}</td><td data-label="Attempts">${d.attempts}</td>
<td data-label="Last answer">${d.lastStatus ?? ''} ${d.lastError ?? ''}</td><td data-label="Created">${when(d.createdAt)}</td>
<td data-label="Actions">${d.status === 'failed' ? html`<form method="post" action="${action}">${csrfField(csrf)}<button class="small" type="submit" aria-label="Send message ${d.eventId} again">Send again</button></form>` : ''}</td></tr>`;
}

/** E-mail sent through the outbox: every message's delivery, the dead letters, and replay. */
export async function mailPages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const events = gh.storage.events;

  const list = async (a: AdminRequest, q: Params, status = 200, notice?: Raw | string, error?: string) => {
    const wanted = field(q, 'status');
    const only = (DELIVERY_STATUSES as readonly string[]).includes(wanted ?? '') ? wanted as DeliveryStatus : undefined;
    const { messages, failed } = await mailOverview(gh.storage.mail, only);
    const filter = (s: string | undefined, label: string) =>
      html`<a class="button small-link" href="${s ? `/admin/mail?status=${s}` : '/admin/mail'}"${only === s ? raw(' aria-current="page"') : ''}>${label}</a>`;
    return a.page(status, 'E-mail', { section: 'mail', notice, error }, html`<h1>E-mail</h1>
<p class="lede">Sent to ${transportOf(gh)}. Dead letters: ${failed === 100 ? '100 or more' : failed}.</p>
<h2 id="replay">Replay dead letters</h2>
<form method="post" action="/admin/mail/replay" aria-labelledby="replay">${csrfField(a.csrf)}
<div class="field"><label for="replay-window">Send every failed message again from</label><select id="replay-window" name="window">
${WINDOWS.map(([v, label]) => html`<option value="${v}">${label}</option>`)}</select></div>
<button class="primary" type="submit">Replay failed messages</button></form>
<h2>Messages</h2>
<nav aria-label="Filter messages" class="row-actions">${filter(undefined, 'All')}${filter('failed', 'Dead letters')}${filter('pending', 'Pending')}${filter('delivered', 'Delivered')}</nav>
${messages.length
    ? html`<table class="grid" id="messages"><thead><tr><th scope="col">Message</th><th scope="col">To</th><th scope="col">Template</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead><tbody>
${messages.map((m) => row(m, a.csrf))}</tbody></table>`
    : html`<p class="muted">No messages${only ? ` with status ${only}` : ''}.</p>`}`);
  };

  app.get('/admin/mail', { ...PAGE, schema: { querystring: paramsOf('status') } }, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return list(a, req.query as Params);
  });

  const act = (path: string, names: string[], run: (a: AdminRequest, msg: string | undefined) => Promise<Raw | string>) =>
    app.post<{ Params: { msg?: string } }>(path, form(...names), async (req, reply) => {
      const a = await adminGate(gh, req, reply);
      if (!a) return reply;
      try {
        return list(a, {}, 200, await run(a, req.params.msg === undefined ? undefined : pathId(req.params.msg)));
      } catch (e) {
        const r = refusal(e);
        return list(a, {}, r.status, undefined, r.message);
      }
    });

  act('/admin/mail/messages/:msg/resend', [], async (a, msg = '') => {
    await resendMail(events, gh.clock, msg);
    await a.record('mail.resend', { type: 'mail_message', id: msg });
    return html`Message <span class="mono">${msg}</span> will be sent again.`;
  });
  act('/admin/mail/replay', ['window'], async (a) => {
    const seconds = WINDOWS.find(([v]) => v === field(a.body, 'window'))?.[0];
    if (!seconds) throw invalidRequest('choose how far back to replay');
    const n = await replayFailedMail(events, gh.clock, gh.clock.now() - Number(seconds) * 1000);
    await a.record('mail.replay', { type: 'mail', id: 'email' });
    return `${n} failed message${n === 1 ? '' : 's'} will be sent again.`;
  });
}
