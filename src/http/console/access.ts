import type { FastifyInstance, FastifyReply } from 'fastify';
import { changeGrant, changeMembership, createGroup, createRole, wholeNumber, type AccessDeps } from '../../core/access/admin.js';
import type { AdminAction } from '../../core/console/actions.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { paramsOf } from '../input.js';
import { html, type Raw } from '../pages/html.js';
import { adminGate, csrfField, field, form, PAGE, refusal, type AdminRequest } from './guard.js';

type Name = { Params: { name: string } };
const DONE = new Map([
  ['group', 'Group created.'], ['member', 'Member added.'], ['removed', 'Member removed.'], ['role', 'Role created.'], ['grant', 'Role granted.'], ['revoke', 'Role revoked.'],
]);

const text = (id: string, name: string, label: string, extra: Raw | string = '') =>
  html`<div class="field"><label for="${id}">${label}</label><input id="${id}" name="${name}" type="text" autocapitalize="none" spellcheck="false"${extra}></div>`;

/**
 * Groups and roles in the console ({auth_url}/admin/groups, /admin/roles):
 * list, create, add members, grant; the same functions as the command line
 * and the admin API (src/core/access/admin.ts). Forms carry the console's
 * CSRF token; a change answers 303 to the list (Post/Redirect/Get) and is
 * recorded as an `admin.action` event.
 */
export async function accessPages(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const deps: AccessDeps = { access: gh.access.store, users: gh.storage.users, clock: gh.clock };

  const groups = async (a: AdminRequest, status = 200, notice?: string, error?: string) => {
    const list = await deps.access.listGroups();
    return a.page(status, 'Groups', { section: 'groups', notice, error }, html`<h1>Groups</h1>
<p class="lede">Apps granted the scope <code>groups</code> see a person's group names; roles granted to a group hold for every member.</p>
${list.length ? html`<table class="grid" id="groups"><thead><tr><th scope="col">Group</th><th scope="col">Members</th><th scope="col">Add a member</th></tr></thead><tbody>
${list.map((g) => html`<tr><td data-label="Group">${g.name}</td>
<td data-label="Members">${g.members.length ? g.members.map((m) => html`<form method="post" action="/admin/groups/${encodeURIComponent(g.name)}/members/remove" class="inline">${csrfField(a.csrf)}<input type="hidden" name="username" value="${m.username}">${m.username} <button class="small" type="submit" aria-label="Remove ${m.username} from ${g.name}">Remove</button></form>`) : html`<span class="muted">none</span>`}</td>
<td data-label="Add a member"><form method="post" action="/admin/groups/${encodeURIComponent(g.name)}/members">${csrfField(a.csrf)}${text(`add-${g.id}`, 'username', 'Username')}<button class="small" type="submit">Add</button></form></td></tr>`)}
</tbody></table>` : html`<p class="muted">No groups yet.</p>`}
<h2>New group</h2>
<form method="post" action="/admin/groups">${csrfField(a.csrf)}${text('group-name', 'name', 'Name (letters, digits, . _ : -)', ' required')}<button class="primary" type="submit">Create group</button></form>`);
  };

  const roles = async (a: AdminRequest, status = 200, notice?: string, error?: string) => {
    const list = await deps.access.listRoles();
    return a.page(status, 'Roles', { section: 'roles', notice, error }, html`<h1>Roles</h1>
<p class="lede">Apps granted the scope <code>roles</code> see a person's roles: granted to them, to one of their groups, or approved in chat for a while.</p>
${list.length ? html`<table class="grid" id="roles"><thead><tr><th scope="col">Role</th><th scope="col">Granted to</th><th scope="col">Asked for at /account/access</th><th scope="col">Grant</th></tr></thead><tbody>
${list.map((r) => html`<tr><td data-label="Role">${r.name}</td>
<td data-label="Granted to">${[...r.users.map((u) => u.username), ...r.groups.map((g) => `group ${g}`)].join(', ') || html`<span class="muted">nobody</span>`}</td>
<td data-label="Asked for">${r.approvers ? `${r.approvals} approval(s) from ${r.approvers}, up to ${r.maxMinutes ?? 60} minutes` : html`<span class="muted">no</span>`}</td>
<td data-label="Grant"><form method="post" action="/admin/roles/${encodeURIComponent(r.name)}/grants">${csrfField(a.csrf)}${text(`grant-user-${r.id}`, 'username', 'Username')}${text(`grant-group-${r.id}`, 'group', 'or group')}<button class="small" type="submit">Grant</button></form></td></tr>`)}
</tbody></table>` : html`<p class="muted">No roles yet.</p>`}
<h2>New role</h2>
<form method="post" action="/admin/roles">${csrfField(a.csrf)}${text('role-name', 'name', 'Name (letters, digits, . _ : -)', ' required')}
${text('role-approvers', 'approvers', 'Approvers (a group; leave empty for a role that is only granted)')}
<div class="field"><label for="role-approvals">Approvals needed</label><input id="role-approvals" name="approvals" type="number" min="1" max="10" inputmode="numeric"></div>
<div class="field"><label for="role-max">At most this many minutes</label><input id="role-max" name="max_minutes" type="number" min="1" max="1440" inputmode="numeric"></div>
<button class="primary" type="submit">Create role</button></form>`);
  };

  const page = (show: typeof groups, path: string) => app.get(path, { ...PAGE, schema: { querystring: paramsOf('done') } }, async (req, reply) => {
    const a = await adminGate(gh, req, reply);
    if (!a) return reply;
    return show(a, 200, DONE.get(field(req.query as Params, 'done') ?? ''));
  });
  page(groups, '/admin/groups');
  page(roles, '/admin/roles');

  /** One change: the core call, its admin.action event, then 303 to the list; a refusal shows the list with why. */
  const change = (path: string, names: string[], show: typeof groups, run: (a: AdminRequest, p: Name['Params']) => Promise<{ action: AdminAction; target: { type: string; id: string }; done: string }>) =>
    app.post<{ Params: Partial<Name['Params']> }>(path, form(...names), async (req, reply): Promise<FastifyReply> => {
      const a = await adminGate(gh, req, reply);
      if (!a) return reply;
      try {
        const r = await run(a, { name: req.params.name ?? '' });
        await a.record(r.action, r.target);
        return reply.redirect(`${path.startsWith('/admin/groups') ? '/admin/groups' : '/admin/roles'}?done=${r.done}`, 303);
      } catch (e) {
        const { status, message } = refusal(e);
        return show(a, status, undefined, message);
      }
    });
  const b = (a: AdminRequest, n: string) => field(a.body, n) || undefined;

  change('/admin/groups', ['name'], groups, async (a) => {
    const g = await createGroup(deps, b(a, 'name'));
    return { action: 'group.create', target: { type: 'group', id: g.id }, done: 'group' };
  });
  change('/admin/groups/:name/members', ['username'], groups, async (a, p) => {
    const r = await changeMembership(deps, p.name, b(a, 'username'), true);
    return { action: 'group.add_member', target: { type: 'group', id: r.group.id }, done: 'member' };
  });
  change('/admin/groups/:name/members/remove', ['username'], groups, async (a, p) => {
    const r = await changeMembership(deps, p.name, b(a, 'username'), false);
    return { action: 'group.remove_member', target: { type: 'group', id: r.group.id }, done: 'removed' };
  });
  change('/admin/roles', ['name', 'approvers', 'approvals', 'max_minutes'], roles, async (a) => {
    const r = await createRole(deps, {
      name: b(a, 'name'), approvers: b(a, 'approvers'), approvals: wholeNumber(b(a, 'approvals'), 'approvals'), maxMinutes: wholeNumber(b(a, 'max_minutes'), 'max minutes'),
    });
    return { action: 'role.create', target: { type: 'role', id: r.id }, done: 'role' };
  });
  change('/admin/roles/:name/grants', ['username', 'group'], roles, async (a, p) => {
    const r = await changeGrant(deps, p.name, { username: b(a, 'username'), group: b(a, 'group') }, true);
    return { action: 'role.grant', target: { type: 'role', id: r.role.id }, done: 'grant' };
  });
}
