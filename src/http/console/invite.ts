import type { FastifyInstance } from 'fastify';
import type { Params } from '../../core/params.js';
import { rfc3339 } from '../../core/notify/events.js';
import type { Gatehouse } from '../../gatehouse.js';
import { html, type Raw } from '../pages/html.js';
import { adminGate, csrfField, field, form, PAGE, refusal, type AdminRequest } from './guard.js';

/**
 * "Invite someone" (issue 26 item 2): the same Signup.invite as `gatehouse
 * user invite`. The link is shown once, on the answer to the POST (console
 * pages are no-store); only its hash is stored, so a reload cannot show it
 * again and a redirect would have to carry it in a URL or a cookie.
 */
export async function invitePages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const modeNote = (): Raw | string => gh.signup.mode === 'off'
    ? html`<p class="error" role="alert">Sign-up is off on this server (GATEHOUSE_SIGNUP): an invitation link works only once it is set to <code>invite</code> or <code>open</code>.</p>`
    : '';
  const page = (a: AdminRequest, status: number, values: Params, extra: { notice?: Raw; error?: string } = {}) =>
    a.page(status, 'Invite someone', { section: 'users', ...extra }, html`<h1>Invite someone</h1>
${modeNote()}
<form method="post" action="/admin/users/invite">${csrfField(a.csrf)}
<div class="field"><label for="invite-email">E-mail address</label><input id="invite-email" name="email" type="email" required maxlength="254" autocapitalize="none" spellcheck="false" value="${field(values, 'email') ?? ''}"></div>
<label class="check"><input type="checkbox" name="admin" value="true"${field(values, 'admin') ? html` checked` : ''}> An administrator of this console</label>
<button type="submit">Make an invitation link</button></form>
<p class="muted">The link makes one account and is valid for 7 days; signing up through it verifies the address.${gh.mailer.enabled ? ' It is also e-mailed to the address.' : ' Nothing is e-mailed (GATEHOUSE_SMTP_URL is not set): send it yourself.'}</p>
<p class="links"><a href="/admin/users">Back to users</a></p>`);

  app.get('/admin/users/invite', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return page(a, 200, {});
  });

  app.post('/admin/users/invite', form('email', 'admin'), async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const email = (field(a.body, 'email') ?? '').slice(0, 254);
    try {
      const r = await gh.signup.invite({ email, admin: field(a.body, 'admin') === 'true', invitedBy: a.admin.username });
      await a.record('user.invite', { type: 'invitation', id: email.trim() });
      const notice = html`<p>An invitation for <strong>${email.trim()}</strong>${field(a.body, 'admin') === 'true' ? ' (an administrator)' : ''}, single use, valid until ${rfc3339(r.expiresAt)}.
${r.emailed ? 'It was e-mailed to that address.' : 'Nothing was e-mailed: send this link yourself.'} It is shown only now:</p>
<p><input id="invitation-url" class="mono" type="text" readonly value="${r.url}" aria-label="Invitation link"></p>`;
      return page(a, 200, {}, { notice });
    } catch (e) {
      const r = refusal(e);
      return page(a, r.status, a.body, { error: r.message });
    }
  });
}
