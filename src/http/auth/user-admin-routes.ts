import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AccountSummary } from '../../core/account/user-accounts-ports.js';
import { recordAdminAction, type AdminAction } from '../../core/console/actions.js';
import { notFound } from '../../core/errors.js';
import type { Gatehouse } from '../../gatehouse.js';
import { jsonObject, pathParams } from '../input.js';

const text = z.string({ error: 'must be a string' });
const PASSWORD = jsonObject({ password: text });
const PROFILE = jsonObject({ name: text.nullish(), email: text.optional() });
const LIST_QUERY = z.object({
  search: text.max(100).optional(),
  limit: z.coerce.number({ error: 'must be a number' }).int().min(1).max(500).optional(),
  offset: z.coerce.number({ error: 'must be a number' }).int().min(0).max(1_000_000).optional(),
});
const ID = pathParams('id');

const USER = z.object({
  id: z.string(), username: z.string(), email: z.string(), email_verified: z.boolean(), name: z.string().nullable(), locked: z.boolean(), admin: z.boolean(),
  created_at: z.string().describe('RFC 3339 time'),
});
const USER_LIST = z.object({ users: z.array(USER) });
const PASSWORD_SET = z.object({ id: z.string(), username: z.string(), sessions_ended: z.number(), grants_revoked: z.number() });
const DELETED = z.object({ id: z.string(), username: z.string(), deleted: z.literal(true), grants_revoked: z.number() });

export const describeAccount = (u: AccountSummary): z.output<typeof USER> => ({
  id: u.id, username: u.username, email: u.email, email_verified: u.emailVerified, name: u.name, locked: u.lockedAt !== null, admin: u.admin,
  created_at: new Date(u.createdAt).toISOString(),
});

/**
 * `/admin/users` beyond creation (issue 26, item 6): list, new password,
 * name and e-mail, deletion. The same core functions as the console and
 * `gatehouse user …` (src/core/account/user-accounts.ts); each change is an
 * `admin.action` in the console's audit trail, by the admin API.
 */
export async function userAdminRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const by = (req: FastifyRequest) => ({ by: 'api' as const, ip: req.ip });
  const audit = (req: FastifyRequest, action: AdminAction, id: string) =>
    recordAdminAction(gh.storage, gh.clock, { userId: '', username: 'admin API', ip: req.ip }, action, { type: 'user', id });

  app.get('/users', { schema: { querystring: LIST_QUERY, response: { 200: USER_LIST } } }, async (req) => {
    const q = req.query as z.output<typeof LIST_QUERY>;
    const users = await gh.userAccountStore.list({ limit: q.limit ?? 100, offset: q.offset ?? 0, ...(q.search ? { search: q.search } : {}) });
    return { users: users.map(describeAccount) };
  });

  app.patch<{ Params: { id: string } }>('/users/:id', { schema: { params: ID, body: PROFILE, response: { 200: USER } } }, async (req) => {
    const b = req.body as z.output<typeof PROFILE>;
    const patch = { ...(b.name !== undefined ? { name: b.name } : {}), ...(b.email !== undefined ? { email: b.email } : {}) };
    const r = await gh.accountTransactions.transaction((tx) => gh.userAccounts.updateUser(tx, req.params.id, patch, by(req), gh.clock.now()));
    if (r.fields.length) await audit(req, 'user.update', r.userId);
    const u = await gh.userAccountStore.get(r.userId);
    if (!u) throw notFound('unknown user');
    return describeAccount(u);
  });

  app.post<{ Params: { id: string } }>('/users/:id/password', { schema: { params: ID, body: PASSWORD, response: { 200: PASSWORD_SET } } }, async (req) => {
    const user = await gh.storage.users.get(req.params.id);
    const prepared = await gh.userAccounts.prepare((req.body as z.output<typeof PASSWORD>).password, user ?? {});
    const r = await gh.accountTransactions.transaction((tx) => gh.userAccounts.setPassword(tx, req.params.id, prepared, by(req), gh.clock.now()));
    await audit(req, 'user.set_password', r.userId);
    return { id: r.userId, username: r.username, sessions_ended: r.sessionsEnded, grants_revoked: r.familiesRevoked };
  });

  app.delete<{ Params: { id: string } }>('/users/:id', { schema: { params: ID, response: { 200: DELETED } } }, async (req) => {
    const r = await gh.accountTransactions.transaction((tx) => gh.userAccounts.deleteAccount(tx, req.params.id, by(req), gh.clock.now()));
    await audit(req, 'user.delete', r.userId);
    return { id: r.userId, username: r.username, deleted: true as const, grants_revoked: r.familiesRevoked };
  });
}
