import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestEmailChange } from '../../core/account/verify-email.js';
import { isMailAddress } from '../../core/mail/mailer.js';
import { GatehouseError } from '../../core/errors.js';
import { sessionSid } from '../../core/oidc/sso.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { accountDeletedPage, deleteConfirmPage, type ProfileView } from '../pages/account-profile.js';
import { recentAuthentication, type SignedIn } from './reauth.js';
import { clearSession, cookieOptions, logUndelivered, sessionCookie } from './session-cookie.js';
import { signedInForm } from './signed-in-form.js';

const ACCOUNT = 'account';
/** The confirmation step of a deletion has its own CSRF purpose: only the page after a right password issues it. */
const DELETE_CONFIRM = 'account-delete';
const PASSWORD_MAX = 1024;

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

/** Shows the account page again with a refusal beside its form (src/http/auth/account-routes.ts). */
export type ShowAccount = (req: FastifyRequest, reply: FastifyReply, status: number, error: NonNullable<ProfileView['error']>) => Promise<unknown>;

/**
 * The person's password, checked with argon2 through the login throttle
 * (src/core/login.ts: counted per account and per address before it is
 * verified, the same counters as the login page), so the account page is no
 * way around the sign-in lockout. On success it also counts as the fresh
 * proof the re-authentication guard wants (src/http/auth/reauth.ts).
 */
async function checkPassword(gh: Gatehouse, req: FastifyRequest, reply: FastifyReply, current: SignedIn, password: string | undefined):
  Promise<{ ok: true } | { ok: false; status: number; message: string }> {
  if (!password) return { ok: false, status: 400, message: 'Enter your current password.' };
  if (password.length > PASSWORD_MAX) return { ok: false, status: 401, message: 'That password is not right. Nothing was changed.' };
  const outcome = await gh.login.attempt(current.user.username, password, req.ip, { session: true });
  if (outcome.ok) return { ok: true };
  if (outcome.reason === 'locked') {
    reply.header('retry-after', String(outcome.retryAfterSeconds));
    return { ok: false, status: 429, message: outcome.busy ? 'Your password is being checked right now. Try again in a second.' : 'Too many wrong passwords. Wait 15 minutes and try again.' };
  }
  return { ok: false, status: 401, message: 'That password is not right. Nothing was changed.' };
}

/** A refusal of the core (the password policy, a bad address) as the form's message; anything else is rethrown. */
function refusal(e: unknown): string {
  if (e instanceof GatehouseError && e.code === 'invalid_request') return e.description ?? 'That is not accepted.';
  throw e;
}

/**
 * The account page's changes to the account itself (issue 26 item 5): the
 * name, the e-mail address (by link), the password, and deletion. Each is a
 * plain form with the account page's CSRF token, answered 303 back to the
 * page (Post/Redirect/Get). Password, e-mail and deletion pass the one
 * re-authentication guard (GATEHOUSE_REAUTH_WINDOW).
 */
export async function accountProfileRoutes(app: FastifyInstance, gh: Gatehouse, show: ShowAccount): Promise<void> {
  const page = { kind: 'page' as const };
  const guard = (req: FastifyRequest, reply: FastifyReply) => signedInForm(gh, req, reply, { path: '/account', purpose: ACCOUNT, name: 'account page' });
  const by = (req: FastifyRequest) => ({ by: 'self' as const, ip: req.ip });

  app.post('/account/name', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'name')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const name = field(ok.body, 'name') ?? '';
    try {
      await gh.accountTransactions.transaction((tx) => gh.userAccounts.updateUser(tx, ok.current.user.id, { name }, by(req), gh.clock.now()));
    } catch (e) {
      return show(req, reply, 400, { form: 'name', message: refusal(e) });
    }
    return reply.redirect('/account?done=name', 303);
  });

  app.post('/account/email', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'email', 'password', 'code')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const email = field(ok.body, 'email')?.trim() ?? '';
    if (!isMailAddress(email)) return show(req, reply, 400, { form: 'email', message: 'Enter an e-mail address such as name@example.com.' });
    if (!gh.mailer.enabled) return show(req, reply, 409, { form: 'email', message: 'This server sends no e-mail, so the new address cannot be confirmed. Nothing was changed.' });
    if (!(await recentAuthentication(gh, req, reply, ok.current, ok.body, { action: '/account/email', page: '/account' }))) return reply;
    // The address itself changes only when the link is followed (src/core/account/verify-email.ts).
    const user = ok.current.user;
    await requestEmailChange(gh.storage, gh.mailer, user, email, gh.clock.now());
    return reply.redirect('/account?done=email', 303);
  });

  app.post('/account/password', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'current_password', 'new_password')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const { current } = ok;
    const newPassword = field(ok.body, 'new_password') ?? '';
    const checked = await checkPassword(gh, req, reply, current, field(ok.body, 'current_password'));
    if (!checked.ok) return show(req, reply, checked.status, { form: 'password', message: checked.message });
    // The current password just given is the guard's proof: the window opens now if it had lapsed.
    const proof = { csrf_token: field(ok.body, 'csrf_token') ?? '', password: field(ok.body, 'current_password') ?? '' };
    if (!(await recentAuthentication(gh, req, reply, current, proof, { action: '/account/password', page: '/account', codes: false }))) return reply;
    let prepared;
    try {
      prepared = await gh.userAccounts.prepare(newPassword, current.user);
    } catch (e) {
      return show(req, reply, 400, { form: 'password', message: refusal(e) });
    }
    const others = (await gh.storage.sessions.listForUser(current.user.id, gh.clock.now())).filter((s) => s.idHash !== current.session.idHash);
    // Every session ends and every refresh token is revoked (src/core/account/user-accounts.ts) ...
    await gh.accountTransactions.transaction((tx) => gh.userAccounts.setPassword(tx, current.user.id, prepared, by(req), gh.clock.now()));
    // ... then the apps of the other browsers hear of it (Back-Channel Logout), and this browser gets a new session with the same sid.
    for (const s of others) logUndelivered(req, await gh.sso.signOut(s));
    const { id } = await gh.sessions.create(current.user.id, { sid: sessionSid(current.session), userAgent: req.headers['user-agent'] ?? null, ip: req.ip });
    reply.setCookie(sessionCookie(gh), id, cookieOptions(gh, Math.floor(gh.sessions.ttlMs / 1000)));
    return reply.redirect('/account?done=password', 303);
  });

  app.post('/account/delete', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'password')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const checked = await checkPassword(gh, req, reply, ok.current, field(ok.body, 'password'));
    if (!checked.ok) return show(req, reply, checked.status, { form: 'delete', message: checked.message });
    if (!(await recentAuthentication(gh, req, reply, ok.current, ok.body, { action: '/account/delete', page: '/account', codes: false }))) return reply;
    return sendPage(reply, 200, deleteConfirmPage({ csrf: csrfToken(ok.current.id, DELETE_CONFIRM), username: ok.current.user.username }));
  });

  app.post('/account/delete/confirm', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'confirm', 'password', 'code')) } }, async (req, reply) => {
    const ok = await signedInForm(gh, req, reply, { path: '/account', purpose: DELETE_CONFIRM, name: 'account page' });
    if (!ok) return reply;
    if (field(ok.body, 'confirm') !== 'delete') return reply.redirect('/account', 303);
    if (!(await recentAuthentication(gh, req, reply, ok.current, ok.body, { action: '/account/delete/confirm', page: '/account' }))) return reply;
    await gh.accountTransactions.transaction((tx) => gh.userAccounts.deleteAccount(tx, ok.current.user.id, by(req), gh.clock.now()));
    clearSession(gh, reply);
    return reply.redirect('/account/deleted', 303);
  });

  app.get('/account/deleted', { config: page }, (_req, reply) => sendPage(reply, 200, accountDeletedPage()));
}
