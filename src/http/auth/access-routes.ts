import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatehouseError } from '../../core/errors.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { accessPage, type AccessView } from '../pages/access.js';
import { currentSession } from './session-cookie.js';
import { signedInForm } from './signed-in-form.js';

const PURPOSE = 'account-access';
const PATH = '/account/access';

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

/**
 * /account/access (issue 28 item 5): the signed-in person's roles and a form
 * to ask for a role with approvers (role, minutes, reason), Post/Redirect/Get
 * with the account pages' CSRF token; the approvers are asked in chat
 * (src/core/access/elevation.ts).
 */
export async function accessRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };
  const { store, elevations } = gh.access;

  const show = async (reply: FastifyReply, current: NonNullable<Awaited<ReturnType<typeof currentSession>>>, status: number, extra: Partial<AccessView>) => {
    const userId = current.user.id;
    const roles = await store.listRoles();
    const names = new Map(roles.map((r) => [r.id, r.name]));
    const requests = (await store.elevationsOf(userId, 10)).map((e) => ({ ...e, role: names.get(e.roleId) ?? '' }));
    return sendPage(reply, status, accessPage({
      username: current.user.username, csrf: csrfToken(current.id, PURPOSE),
      requestable: roles.filter((r): r is typeof r & { approvers: string } => r.approvers !== null),
      roles: await store.rolesOf(userId, gh.clock.now()), requests, ...extra,
    }));
  };

  app.get(PATH, { config: page, schema: { querystring: paramsOf('done', 'asked') } }, async (req: FastifyRequest, reply) => {
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect(`/login?return_to=${encodeURIComponent(PATH)}`, 302);
    const q = req.query as Params;
    const asked = Number(q.asked);
    const notice = q.done === 'asked'
      ? (asked > 0 ? `Asked. ${asked} approver chat${asked === 1 ? '' : 's'} got your request; you will hear the answer in your linked chat.`
        : 'Asked, but no approver has a linked chat yet: ask them to link one.')
      : undefined;
    return show(reply, current, 200, notice ? { notice } : {});
  });

  app.post(PATH, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'role', 'minutes', 'reason')) } }, async (req, reply) => {
    const ok = await signedInForm(gh, req, reply, { path: PATH, purpose: PURPOSE, name: 'access page' });
    if (!ok) return reply;
    const input = { role: field(ok.body, 'role'), minutes: field(ok.body, 'minutes'), reason: field(ok.body, 'reason') };
    try {
      const { asked } = await elevations.request(ok.current.user.id, input);
      return reply.redirect(`${PATH}?done=asked&asked=${asked}`, 303);
    } catch (e) {
      if (!(e instanceof GatehouseError) || e.status >= 500) throw e;
      return show(reply, ok.current, e.status, { error: e.description ?? e.code, form: input });
    }
  });
}
