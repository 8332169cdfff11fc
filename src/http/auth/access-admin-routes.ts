import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { changeGrant, changeMembership, createGroup, createRole, describeGroup, describeRole, type AccessDeps } from '../../core/access/admin.js';
import type { Gatehouse } from '../../gatehouse.js';
import { jsonObject, pathParams } from '../input.js';

const text = z.string({ error: 'must be a string' });
const count = z.number({ error: 'must be a number' }).optional();
const GROUP = jsonObject({ name: text });
const MEMBER = jsonObject({ username: text });
const ROLE = jsonObject({ name: text, approvers: text.nullish(), approvals: count, max_minutes: count });
const GRANTEE = jsonObject({ username: text.optional(), group: text.optional() });
const GRANTEE_QUERY = z.object({ username: text.optional(), group: text.optional() });
const NAME = pathParams('name');
const NAME_USER = pathParams('name', 'username');

/**
 * `/admin/groups` and `/admin/roles` (shared/INTERFACE.md, "Roles, groups,
 * claims and step-up"), registered inside the admin API's context so its
 * bearer check and error answers apply. The same functions as the command
 * line and the console (src/core/access/admin.ts).
 */
export async function accessAdminRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const deps: AccessDeps = { access: gh.access.store, users: gh.storage.users, clock: gh.clock };

  app.post('/groups', { schema: { body: GROUP } }, async (req, reply) => {
    const g = await createGroup(deps, (req.body as z.output<typeof GROUP>).name);
    return reply.code(201).send(describeGroup(g));
  });
  app.get('/groups', async () => ({ groups: (await deps.access.listGroups()).map(describeGroup) }));
  app.post<{ Params: { name: string } }>('/groups/:name/members', { schema: { params: NAME, body: MEMBER } }, async (req) => {
    const r = await changeMembership(deps, req.params.name, (req.body as z.output<typeof MEMBER>).username, true);
    return { group: r.group.name, username: r.user.username, changed: r.changed };
  });
  app.delete<{ Params: { name: string; username: string } }>('/groups/:name/members/:username', { schema: { params: NAME_USER } }, async (req) => {
    const r = await changeMembership(deps, req.params.name, req.params.username, false);
    return { group: r.group.name, username: r.user.username, changed: r.changed };
  });

  app.post('/roles', { schema: { body: ROLE } }, async (req, reply) => {
    const b = req.body as z.output<typeof ROLE>;
    const role = await createRole(deps, { name: b.name, approvers: b.approvers ?? undefined, approvals: b.approvals, maxMinutes: b.max_minutes });
    return reply.code(201).send(describeRole(role, b.approvers ?? null));
  });
  app.get('/roles', async () => ({ roles: (await deps.access.listRoles()).map((r) => describeRole(r)) }));
  const granted = (r: Awaited<ReturnType<typeof changeGrant>>) => ({ role: r.role.name, [r.to.kind === 'user' ? 'username' : 'group']: r.to.name, changed: r.changed });
  app.post<{ Params: { name: string } }>('/roles/:name/grants', { schema: { params: NAME, body: GRANTEE } }, async (req) =>
    granted(await changeGrant(deps, req.params.name, req.body as z.output<typeof GRANTEE>, true)));
  app.delete<{ Params: { name: string } }>('/roles/:name/grants', { schema: { params: NAME, querystring: GRANTEE_QUERY } }, async (req) =>
    granted(await changeGrant(deps, req.params.name, req.query as z.output<typeof GRANTEE_QUERY>, false)));
}
