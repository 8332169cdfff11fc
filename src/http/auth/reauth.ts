import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { reauthPage } from '../pages/security.js';
import { currentSession, safeReturnTo } from './session-cookie.js';

/** The page that asks for the password (or a code) and then continues to `return_to` (a local path). */
export const REAUTH_PATH = '/account/reauth';
const PURPOSE = 'reauth';
const PASSWORD_MAX = 1024;
const CODE_MAX = 64;

export type SignedIn = NonNullable<Awaited<ReturnType<typeof currentSession>>>;

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

/** The link to the re-authentication page, continuing to `returnTo` once the proof is right. */
export const reauthLink = (gh: Gatehouse, returnTo: string) => `${REAUTH_PATH}?return_to=${encodeURIComponent(safeReturnTo(gh, returnTo))}`;

/**
 * Checks the proof a form carries (`password`, or `code` when `codes`),
 * through the one core check (src/core/reauth.ts): the session's window opens
 * from now when it is right. Undefined when the form carries none.
 */
async function proofOf(gh: Gatehouse, req: FastifyRequest, current: SignedIn, body: Params, codes: boolean) {
  const password = field(body, 'password') || undefined;
  const code = codes ? field(body, 'code')?.trim() || undefined : undefined;
  if (!password && !code) return undefined;
  if ((password?.length ?? 0) > PASSWORD_MAX || (code?.length ?? 0) > CODE_MAX) return { ok: false as const, reason: 'invalid' as const };
  return gh.reauth.prove(current.session, current.user, { password, code }, req.ip);
}

/**
 * Sudo mode: the one guard every sensitive change passes (second factors,
 * recovery codes, approval in chat, the chat link; the account's password,
 * e-mail and deletion). True when the session's person gave the password or
 * a second factor within GATEHOUSE_REAUTH_WINDOW, or gives it now in this
 * very form; otherwise it has answered the request itself with a page asking
 * for it, whose form posts the same change again (the change's own fields
 * carried over) with `password` or `code`, so the change goes on once the
 * proof is right. Call it after the form's session and CSRF checks.
 *
 * `action`: the route's own path (never taken from the request);
 * `codes: false` when the change's own form has a field `code`;
 * `page`: where "sign in again" continues to.
 */
export async function recentAuthentication(
  gh: Gatehouse, req: FastifyRequest, reply: FastifyReply, current: SignedIn, body: Params,
  opts: { action: string; page: string; codes?: boolean },
): Promise<boolean> {
  const codes = opts.codes ?? true;
  if (gh.reauth.fresh(current.session)) return true;
  const proof = await proofOf(gh, req, current, body, codes);
  if (proof?.ok) return true;
  const carried = Object.entries(body).flatMap(([name, v]) =>
    name === 'password' || (codes && name === 'code') || v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x): [string, string] => [name, String(x)]));
  let status = 403;
  let error: string | undefined;
  if (proof?.reason === 'locked') {
    reply.header('retry-after', String(proof.retryAfterSeconds));
    [status, error] = [429, 'Too many wrong attempts. Wait 15 minutes and try again.'];
  } else if (proof) {
    [status, error] = [401, `That password${codes ? ' or code' : ''} is not right. Nothing was changed.`];
  }
  sendPage(reply, status, reauthPage({ action: opts.action, hidden: carried, codes, signInReturnTo: safeReturnTo(gh, opts.page), ...(error ? { error } : {}) }));
  return false;
}

/**
 * The same guard for a JSON request (adding a passkey): true when fresh;
 * otherwise 403 `{error: "reauth_required", reauth}` naming the page that
 * asks for the password and comes back to `page`.
 */
export function recentAuthenticationJson(gh: Gatehouse, reply: FastifyReply, current: SignedIn, page: string): boolean {
  if (gh.reauth.fresh(current.session)) return true;
  reply.code(403).header('cache-control', 'no-store').send({
    error: 'reauth_required', error_description: 'confirm it is you: enter your password again', reauth: reauthLink(gh, page),
  });
  return false;
}

/** GET/POST /account/reauth?return_to=…: the proof on its own, then on to `return_to` (a local path only). */
export async function reauthRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };

  const ask = (current: SignedIn, reply: FastifyReply, returnTo: string, status = 200, error?: string) =>
    sendPage(reply, status, reauthPage({
      action: REAUTH_PATH, hidden: [['csrf_token', csrfToken(current.id, PURPOSE)], ['return_to', returnTo]], codes: true, signInReturnTo: returnTo,
      ...(error ? { error } : {}),
    }));

  app.get(REAUTH_PATH, { config: page, schema: { querystring: paramsOf('return_to') } }, async (req, reply) => {
    const returnTo = safeReturnTo(gh, field(req.query as Params, 'return_to'));
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect(`/login?return_to=${encodeURIComponent(returnTo)}`, 302);
    return ask(current, reply, returnTo);
  });

  app.post(REAUTH_PATH, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'return_to', 'password', 'code')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the form must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const returnTo = safeReturnTo(gh, field(body, 'return_to'));
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect(`/login?return_to=${encodeURIComponent(returnTo)}`, 303);
    if (!csrfValid(current.id, PURPOSE, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'Reload the page and try again.');
    const proof = await proofOf(gh, req, current, body, true);
    if (!proof) return ask(current, reply, returnTo, 400, 'Enter your password or a code.');
    if (proof.ok) return reply.redirect(returnTo, 303);
    if (proof.reason === 'locked') {
      reply.header('retry-after', String(proof.retryAfterSeconds));
      return ask(current, reply, returnTo, 429, 'Too many wrong attempts. Wait 15 minutes and try again.');
    }
    return ask(current, reply, returnTo, 401, 'That password or code is not right.');
  });
}
