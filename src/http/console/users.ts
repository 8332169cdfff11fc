import type { FastifyInstance } from 'fastify';
import { lockUser, resetSessions, unlockUser } from '../../core/console/actions.js';
import type { ConsoleUser } from '../../core/console/ports.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { paramsOf } from '../input.js';
import { html, type Raw } from '../pages/html.js';
import { adminGate, csrfField, field, form, PAGE, pathId, refusal, type AdminRequest } from './guard.js';
import { when } from './layout.js';

type Id = { Params: { id: string } };
const PER_PAGE = 50;

function userRow(u: ConsoleUser, csrf: string, self: string): Raw {
  const id = encodeURIComponent(u.id);
  const who = html`<a href="/admin/users/${id}">${u.username}</a>${u.name ? html` <span class="muted">(${u.name})</span>` : ''}`;
  return html`<tr><td data-label="User">${who}${u.admin ? html` <span class="badge">admin</span>` : ''}${u.lockedAt ? html` <span class="badge">locked</span>` : ''}</td>
<td data-label="E-mail">${u.email}</td><td data-label="Created">${when(u.createdAt)}</td>
<td data-label="Actions">
${u.lockedAt
    ? html`<form method="post" action="/admin/users/${id}/unlock">${csrfField(csrf)}<button class="small" type="submit" aria-label="Unlock ${u.username}">Unlock</button></form>`
    : u.id === self ? '' : html`<form method="post" action="/admin/users/${id}/lock">${csrfField(csrf)}<button class="small danger" type="submit" aria-label="Lock ${u.username}">Lock</button></form>`}
<form method="post" action="/admin/users/${id}/sessions/reset">${csrfField(csrf)}<button class="small" type="submit" aria-label="Sign ${u.username} out everywhere">Sign out everywhere</button></form>
</td></tr>`;
}

/** Users (list, lock and unlock, end every session) and bots (list). */
export async function userPages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const list = async (a: AdminRequest, q: Params, status = 200, notice?: string, error?: string) => {
    const search = (field(q, 'q') ?? '').slice(0, 100);
    const pageNo = Math.max(1, Math.min(10_000, Number.parseInt(field(q, 'page') ?? '1', 10) || 1));
    const users = await a.store.listUsers({ limit: PER_PAGE + 1, offset: (pageNo - 1) * PER_PAGE, search: search || undefined });
    const more = users.length > PER_PAGE;
    const link = (n: number) => `/admin/users?${new URLSearchParams({ ...(search ? { q: search } : {}), page: String(n) })}`;
    return a.page(status, 'Users', { section: 'users', notice, error }, html`<h1>Users</h1>
<p class="links"><a href="/admin/users/new">New user</a></p>
<p class="links"><a href="/admin/users/invite">Invite someone</a></p>
<form method="get" action="/admin/users" role="search"><div class="field"><label for="user-search">Find by username or e-mail (start)</label>
<input id="user-search" name="q" type="text" value="${search}" autocapitalize="none" spellcheck="false"></div><button class="small" type="submit">Find</button></form>
${users.length
    ? html`<table class="grid"><thead><tr><th scope="col">User</th><th scope="col">E-mail</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead><tbody>
${users.slice(0, PER_PAGE).map((u) => userRow(u, a.csrf, a.admin.userId))}</tbody></table>`
    : html`<p class="muted">No users${search ? ' match' : ' yet'}.</p>`}
<p class="links">${pageNo > 1 ? html`<a href="${link(pageNo - 1)}">Previous page</a> ` : ''}${more ? html`<a href="${link(pageNo + 1)}">Next page</a>` : ''}</p>
<p class="muted">A locked account cannot sign in until it is unlocked; locking also signs it out everywhere and revokes every token it holds.</p>`);
  };

  app.get('/admin/users', { ...PAGE, schema: { querystring: paramsOf('q', 'page') } }, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return list(a, req.query as Params);
  });

  const revoke = (userId: string, sid: string) => gh.sso.revokeSession(userId, sid);
  const act = (path: string, run: (a: AdminRequest, id: string) => Promise<string>) =>
    app.post<Id>(path, form(), async (req, reply) => {
      const a = await adminGate(gh, req, reply);
      if (!a) return reply;
      try {
        const notice = await run(a, pathId(req.params.id));
        return list(a, {}, 200, notice);
      } catch (e) {
        const r = refusal(e);
        return list(a, {}, r.status, undefined, r.message);
      }
    });

  const name = async (a: AdminRequest, id: string) => (await a.store.getUser(id))?.username ?? id;
  act('/admin/users/:id/lock', async (a, id) => {
    if (id === a.admin.userId) return 'You cannot lock your own account.';
    await lockUser({ storage: gh.storage, clock: gh.clock, signedOut: (s) => gh.sso.signOut(s) }, id, { by: 'admin', ip: a.admin.ip });
    await a.record('user.lock', { type: 'user', id });
    return `${await name(a, id)} is locked and signed out everywhere.`;
  });
  act('/admin/users/:id/unlock', async (a, id) => {
    await unlockUser({ storage: gh.storage, clock: gh.clock }, id, { by: 'admin', ip: a.admin.ip });
    await a.record('user.unlock', { type: 'user', id });
    return `${await name(a, id)} can sign in again.`;
  });
  act('/admin/users/:id/sessions/reset', async (a, id) => {
    const user = await a.store.getUser(id);
    if (!user) return 'There is no such user.';
    const n = await resetSessions({ storage: gh.storage, clock: gh.clock, revoke }, id);
    await a.record('user.reset_sessions', { type: 'user', id });
    return `${user.username} is signed out everywhere (${n} session${n === 1 ? '' : 's'} ended).`;
  });

  app.get('/admin/bots', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const bots = await a.store.listBots(500);
    return a.page(200, 'Bots', { section: 'bots' }, html`<h1>Bots</h1>
${bots.length
    ? html`<table class="grid"><thead><tr><th scope="col">Bot</th><th scope="col">Owner</th><th scope="col">Webhook</th><th scope="col">Last error</th></tr></thead><tbody>
${bots.map((b) => html`<tr><td data-label="Bot">@${b.username} <span class="muted">${b.name} · id ${b.id}</span></td><td data-label="Owner">${b.owner ?? '—'}</td>
<td data-label="Webhook" class="mono">${b.webhookUrl ?? 'getUpdates'}</td><td data-label="Last error">${b.lastErrorMessage ? html`${b.lastErrorMessage} (${when(b.lastErrorDate)})` : '—'}</td></tr>`)}
</tbody></table>`
    : html`<p class="muted">No bots yet. People create them by talking to BotFather on the chat page, or with <code>gatehouse bot create</code>.</p>`}`);
  });
}
