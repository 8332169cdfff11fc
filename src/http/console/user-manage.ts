import type { FastifyInstance } from 'fastify';
import { createUserRecorded } from '../../core/admin.js';
import { notFound } from '../../core/errors.js';
import type { Gatehouse } from '../../gatehouse.js';
import { html } from '../pages/html.js';
import { adminGate, csrfField, field, form, PAGE, pathId, refusal, type AdminRequest } from './guard.js';

type Id = { Params: { id: string } };

/**
 * The console's account changes (issue 26, item 6): create with a temporary
 * password, edit the name and e-mail, send a reset link, delete after a
 * confirmation page (plain forms, no script). The same core functions as the
 * admin API and the command line; each recorded as an `admin.action`.
 */
export async function userManagePages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const by = (a: AdminRequest) => ({ by: 'admin' as const, ip: a.admin.ip });

  const manage = async (a: AdminRequest, id: string, status = 200, notice?: string, error?: string) => {
    const user = await gh.userAccountStore.get(id);
    if (!user) return a.page(404, 'Not found', { section: 'users', error: 'There is no user with this id.' }, html`<p class="links"><a href="/admin/users">All users</a></p>`);
    const base = `/admin/users/${encodeURIComponent(id)}`;
    return a.page(status, `Manage ${user.username}`, { section: 'users', notice, error }, html`<h1>Manage ${user.username}</h1>
<h2>Name and e-mail</h2>
<form method="post" action="${base}/edit">${csrfField(a.csrf)}
<div class="field"><label for="name">Name</label><input id="name" name="name" type="text" maxlength="200" value="${user.name ?? ''}"></div>
<div class="field"><label for="email">E-mail address</label><input id="email" name="email" type="email" maxlength="254" required value="${user.email}"></div>
<button type="submit">Save</button></form>
<h2>Password</h2>
${gh.mailer.enabled
    ? html`<form method="post" action="${base}/reset-link">${csrfField(a.csrf)}<p>E-mail ${user.email} a link to choose a new password (single use, 30 minutes).</p><button type="submit">Send a reset link</button></form>`
    : html`<p class="muted">E-mail is off on this server (GATEHOUSE_SMTP_URL): use <code>gatehouse user set-password</code>.</p>`}
<h2>Delete</h2>
<p><a class="danger" href="${base}/delete">Delete this account…</a></p>
<p class="links"><a href="${base}">Back to ${user.username}</a> · <a href="/admin/users">All users</a></p>`);
  };
  const act = (path: string, names: string[], run: (a: AdminRequest, id: string) => Promise<string>) =>
    app.post<Id>(path, form(...names), async (req, reply) => {
      const a = await adminGate(gh, req, reply);
      if (!a) return reply;
      const id = pathId(req.params.id);
      try {
        return manage(a, id, 200, await run(a, id));
      } catch (e) {
        const r = refusal(e);
        return manage(a, id, r.status, undefined, r.message);
      }
    });

  app.get<Id>('/admin/users/:id/manage', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return manage(a, pathId(req.params.id));
  });

  act('/admin/users/:id/edit', ['name', 'email'], async (a, id) => {
    const name = field(a.body, 'name');
    const email = field(a.body, 'email');
    const r = await gh.accountTransactions.transaction((tx) =>
      gh.userAccounts.updateUser(tx, id, { ...(name !== undefined ? { name } : {}), ...(email !== undefined ? { email } : {}) }, by(a), gh.clock.now()));
    if (!r.fields.length) return 'Nothing changed.';
    await a.record('user.update', { type: 'user', id });
    return `Saved: ${r.fields.join(' and ')}.`;
  });

  act('/admin/users/:id/reset-link', [], async (a, id) => {
    if (!(await gh.recovery.sendLink(id, a.admin.ip))) throw notFound('no reset link was sent: there is no such user, no address, or e-mail is off');
    await a.record('user.send_reset', { type: 'user', id });
    return 'A reset link is on its way to the account\'s e-mail address.';
  });

  app.get<Id>('/admin/users/:id/delete', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const id = pathId(req.params.id);
    const user = await gh.userAccountStore.get(id);
    if (!user) return manage(a, id);
    const base = `/admin/users/${encodeURIComponent(id)}`;
    return a.page(200, `Delete ${user.username}?`, { section: 'users' }, html`<h1>Delete ${user.username}?</h1>
<p>The account, its second factors, consents, linked chats and third-party links are removed; every session ends and the applications are told; every token is revoked. This cannot be undone.</p>
<form method="post" action="${base}/delete">${csrfField(a.csrf)}<input type="hidden" name="confirm" value="${user.username}">
<button class="danger" type="submit">Delete ${user.username}</button></form>
<p class="links"><a href="${base}/manage">Cancel</a></p>`);
  });

  app.post<Id>('/admin/users/:id/delete', form('confirm'), async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const id = pathId(req.params.id);
    const user = await gh.userAccountStore.get(id);
    // The confirmation page's own form names the account: a forged or stale post without it deletes nothing.
    if (!user || field(a.body, 'confirm') !== user.username) return manage(a, id, 400, undefined, 'Confirm the deletion on its page.');
    if (id === a.admin.userId) return manage(a, id, 400, undefined, 'You cannot delete your own account here.');
    await gh.accountTransactions.transaction((tx) => gh.userAccounts.deleteAccount(tx, id, by(a), gh.clock.now()));
    await a.record('user.delete', { type: 'user', id });
    return a.page(200, 'Deleted', { section: 'users', notice: `${user.username} was deleted.` }, html`<p class="links"><a href="/admin/users">All users</a></p>`);
  });

  app.get('/admin/users/new', PAGE, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return newUser(a);
  });
  const newUser = (a: AdminRequest, status = 200, error?: string, v: { username?: string; email?: string; name?: string } = {}) =>
    a.page(status, 'New user', { section: 'users', error }, html`<h1>New user</h1>
<form method="post" action="/admin/users/new">${csrfField(a.csrf)}
<div class="field"><label for="username">Username</label><input id="username" name="username" type="text" maxlength="64" required value="${v.username ?? ''}"></div>
<div class="field"><label for="email">E-mail address</label><input id="email" name="email" type="email" maxlength="254" required value="${v.email ?? ''}"></div>
<div class="field"><label for="name">Name</label><input id="name" name="name" type="text" maxlength="200" value="${v.name ?? ''}"></div>
<div class="field"><label for="password">Temporary password</label><input id="password" name="password" type="password" autocomplete="new-password" minlength="8" required></div>
<p class="muted">Give it to the person by a way you trust; they change it on their account page, or choose their own through "Forgot password?".</p>
<button class="primary" type="submit">Create</button></form>`);

  app.post('/admin/users/new', form('username', 'email', 'name', 'password'), async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    const v = { username: field(a.body, 'username') ?? '', email: field(a.body, 'email') ?? '', name: field(a.body, 'name') || undefined };
    try {
      // The policy of every new password (src/core/account/password-policy.ts), then the account.
      // Hashed once there; the account and its user.created event commit together.
      const password = await gh.userAccounts.prepare(field(a.body, 'password') ?? '', v);
      const user = await createUserRecorded(gh.storage, gh.hasher, gh.clock, { ...v, password, name: v.name ?? null }, 'admin');
      await a.record('user.create', { type: 'user', id: user.id });
      return manage(a, user.id, 201, `${user.username} was created with the temporary password.`);
    } catch (e) {
      const r = refusal(e);
      return newUser(a, r.status, r.message, v);
    }
  });
}
