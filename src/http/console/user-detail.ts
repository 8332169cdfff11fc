import type { FastifyInstance } from 'fastify';
import { accountOverview, revokeApp } from '../../core/oidc/account.js';
import { notFound } from '../../core/errors.js';
import type { Session } from '../../core/model.js';
import type { Gatehouse } from '../../gatehouse.js';
import { html, type Raw } from '../pages/html.js';
import { describeBrowser } from '../pages/account.js';
import { scopeTitle } from '../pages/pages.js';
import { adminGate, csrfField, field, form, PAGE, pathId, refusal, type AdminRequest } from './guard.js';
import { when } from './layout.js';

type Id = { Params: { id: string } };

/** The account page's overview marks the viewer's own session; an administrator looks from outside, so none is. */
const OUTSIDE = { idHash: '' } as Session;

/** One person: their sessions (end one) and the applications they allowed (remove one), as their own account page shows them. */
export async function userDetailPages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const show = async (a: AdminRequest, id: string, status = 200, notice?: Raw | string, error?: string) => {
    const user = await a.store.getUser(id);
    if (!user) return a.page(404, 'Not found', { section: 'users', error: 'There is no user with this id.' }, html`<p class="links"><a href="/admin/users">All users</a></p>`);
    const { sessions, apps } = await accountOverview(gh, id, OUTSIDE);
    const base = `/admin/users/${encodeURIComponent(id)}`;
    return a.page(status, user.username, { section: 'users', notice, error }, html`<h1>${user.username}</h1>
<p class="lede">${user.email}${user.name ? html` · ${user.name}` : ''}${user.admin ? html` <span class="badge">admin</span>` : ''}${user.lockedAt ? html` <span class="badge">locked ${when(user.lockedAt)}</span>` : ''}</p>
<h2 id="sessions">Sessions</h2>
${sessions.length
    ? html`<table class="grid" aria-labelledby="sessions"><thead><tr><th scope="col">Browser</th><th scope="col">Signed in</th><th scope="col">Apps</th><th scope="col">Actions</th></tr></thead><tbody>
${sessions.map((s) => html`<tr><td data-label="Browser">${describeBrowser(s.userAgent)}</td><td data-label="Signed in">${when(s.authTime)}</td>
<td data-label="Apps">${s.apps.map((x) => x.name).join(', ') || '—'}</td>
<td data-label="Actions"><form method="post" action="${base}/sessions/end">${csrfField(a.csrf)}<input type="hidden" name="sid" value="${s.sid}">
<button class="small" type="submit" aria-label="End the session in ${describeBrowser(s.userAgent)}">End session</button></form></td></tr>`)}
</tbody></table>`
    : html`<p class="muted">Not signed in anywhere.</p>`}
<h2 id="grants">Applications allowed</h2>
${apps.length
    ? html`<table class="grid" aria-labelledby="grants"><thead><tr><th scope="col">Application</th><th scope="col">May</th><th scope="col">Allowed</th><th scope="col">Actions</th></tr></thead><tbody>
${apps.map((x) => html`<tr><td data-label="Application">${x.name}</td><td data-label="May">${x.scope.map(scopeTitle).join(' · ') || 'Know that they signed in'}</td><td data-label="Allowed">${when(x.grantedAt)}</td>
<td data-label="Actions"><form method="post" action="${base}/apps/remove">${csrfField(a.csrf)}<input type="hidden" name="client_id" value="${x.clientId}">
<button class="small danger" type="submit" aria-label="Remove the access of ${x.name}">Remove access</button></form></td></tr>`)}
</tbody></table>`
    : html`<p class="muted">No application has access.</p>`}
<p class="links"><a href="${base}/manage">Edit, reset the password or delete</a> · <a href="/admin/users">All users</a></p>`);
  };

  app.get<Id>('/admin/users/:id', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return show(a, pathId(req.params.id));
  });

  app.post<Id>('/admin/users/:id/sessions/end', form('sid'), async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const id = pathId(req.params.id);
    try {
      const sid = field(a.body, 'sid');
      if (!sid || sid.length > 128 || !(await gh.sso.revokeSession(id, sid))) throw notFound('that session has already ended');
      await a.record('user.end_session', { type: 'user', id });
      return show(a, id, 200, 'The session ended; the applications it signed in to were told.');
    } catch (e) {
      const r = refusal(e);
      return show(a, id, r.status, undefined, r.message);
    }
  });

  app.post<Id>('/admin/users/:id/apps/remove', form('client_id'), async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const id = pathId(req.params.id);
    try {
      const clientId = field(a.body, 'client_id');
      if (!clientId || clientId.length > 255 || !(await revokeApp(gh, id, clientId))) throw notFound('that application has no access to remove');
      await a.record('user.remove_app', { type: 'user', id });
      return show(a, id, 200, 'The application no longer has access; its tokens were revoked.');
    } catch (e) {
      const r = refusal(e);
      return show(a, id, r.status, undefined, r.message);
    }
  });
}
