import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../core/model.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { StepOutcome } from '../../core/mfa/second-step.js';
import type { AuthMethod } from '../../core/oidc/acr.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { PAGE_HEADERS } from '../errors.js';
import { formBody, paramsOf } from '../input.js';
import { describeBrowser } from '../pages/account.js';
import { SECOND_STEP_SCRIPT, secondStepPage } from '../pages/security.js';
import { cookieOptions, logUndelivered, sessionCookie } from './session-cookie.js';
import { PENDING_TTL_MS } from '../../core/mfa/second-step.js';

const STEP = 'second-step';
/** The long poll answers within this, so proxies keep the request open. */
const WAIT_MS = 25_000;

/** Binds the pending login to this browser (__Host- under https, like the session cookie). */
export const pendingCookie = (gh: Gatehouse) => (gh.oauth.issuer.startsWith('https:') ? '__Host-gh_mfa' : 'gh_mfa');

/** This page may run its own script and poll its own origin; everything else as every page. */
const SCRIPT_CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";

/** A page that runs our own scripts (same origin only) and fetches from this origin; the other headers as every page. */
export function sendScriptedPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).headers({ ...PAGE_HEADERS, 'content-security-policy': SCRIPT_CSP }).send(body);
}

/** After the right password of an account with a second factor: no session yet, the second-step page. */
export async function startSecondStep(gh: Gatehouse, req: FastifyRequest, reply: FastifyReply, user: User, returnTo: string): Promise<FastifyReply> {
  const ua = req.headers['user-agent'] ?? null;
  const { token } = await gh.mfa.secondStep.begin(user, { returnTo, userAgent: ua, ip: req.ip, browser: describeBrowser(ua) });
  reply.setCookie(pendingCookie(gh), token, cookieOptions(gh, Math.floor(PENDING_TTL_MS / 1000)));
  return reply.redirect('/login/second-step', 303);
}

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

export async function secondStepRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };
  const token = (req: FastifyRequest) => req.cookies[pendingCookie(gh)];

  const show = async (req: FastifyRequest, reply: FastifyReply, status = 200, error?: string) => {
    const t = token(req);
    const p = await gh.mfa.secondStep.get(t);
    if (!p) return expired(reply);
    const a = p.approval;
    if (a?.state === 'denied') return denied(reply);
    const passkeys = (await gh.mfa.store.listPasskeys(p.userId)).length > 0;
    const view = {
      csrf: csrfToken(t!, STEP), ...(a?.state === 'waiting' ? { approvalNumber: a.number } : {}), ...(error ? { error } : {}),
      ...(passkeys ? { passkeyReturnTo: p.returnTo } : {}),
    };
    return (view.approvalNumber === undefined ? sendPage : sendScriptedPage)(reply, status, secondStepPage(view));
  };

  const expired = (reply: FastifyReply) => {
    reply.clearCookie(pendingCookie(gh), cookieOptions(gh));
    return sendErrorPage(reply, 400, 'Sign-in expired', 'This sign-in has expired or was already used. Sign in again.');
  };
  const denied = (reply: FastifyReply) => {
    reply.clearCookie(pendingCookie(gh), cookieOptions(gh));
    return sendErrorPage(reply, 403, 'Sign-in denied', 'This sign-in was denied in chat. Sign in again if it was you.');
  };

  /** The step passed: now, and only now, a session. */
  const finish = async (req: FastifyRequest, reply: FastifyReply, outcome: StepOutcome) => {
    if (outcome.ok) {
      reply.clearCookie(pendingCookie(gh), cookieOptions(gh));
      // A step-up of a signed-in session (acr_values) keeps how it signed in first; a new sign-in's first factor was the password.
      const before = await gh.sessions.resolve(req.cookies[sessionCookie(gh)]);
      const first = before?.userId === outcome.user.id ? before.amr ?? ['pwd'] : ['pwd'];
      const { id, ended } = await gh.sso.signIn(req.cookies[sessionCookie(gh)], outcome.user.id, req.headers['user-agent'], { username: outcome.user.username, ip: outcome.ip }, [...first, outcome.method] as AuthMethod[]);
      logUndelivered(req, ended);
      reply.setCookie(sessionCookie(gh), id, cookieOptions(gh, Math.floor(gh.sessions.ttlMs / 1000)));
      return reply.redirect(outcome.returnTo, 303);
    }
    switch (outcome.reason) {
      case 'locked':
        reply.header('retry-after', String(outcome.retryAfterSeconds));
        return show(req, reply, 429, 'Too many wrong codes. Wait 15 minutes and try again.');
      case 'invalid':
        return show(req, reply, 401, 'That code is not right, or it was already used.');
      case 'waiting':
        return show(req, reply, 409, 'The number was not tapped yet. Tap it in your chat, or enter a code.');
      case 'denied':
        return denied(reply);
      case 'disabled':
        reply.clearCookie(pendingCookie(gh), cookieOptions(gh));
        return sendErrorPage(reply, 403, 'Account locked', 'This account is locked. Ask an administrator to unlock it.');
      default:
        return expired(reply);
    }
  };

  app.get('/assets/second-step.js', async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(SECOND_STEP_SCRIPT));

  app.get('/login/second-step', { config: page }, async (req, reply) => {
    // Without script the page reloads itself: an approved sign-in continues here (only this browser's own, by its cookie).
    const p = await gh.mfa.secondStep.get(token(req));
    if (p?.approval?.state === 'approved') return finish(req, reply, await gh.mfa.secondStep.approved(token(req)));
    return show(req, reply);
  });

  const guard = (req: FastifyRequest, reply: FastifyReply): Params | undefined => {
    if (!isForm(req)) {
      sendErrorPage(reply, 400, 'Bad request', 'the form must be sent as a form');
      return undefined;
    }
    const body = (req.body ?? {}) as Params;
    if (!csrfValid(token(req), STEP, body.csrf_token)) {
      sendErrorPage(reply, 403, 'Request expired', 'This sign-in form has expired. Sign in again.');
      return undefined;
    }
    return body;
  };

  app.post('/login/second-step', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'code')) } }, async (req, reply) => {
    const body = guard(req, reply);
    if (!body) return reply;
    const code = field(body, 'code')?.trim() ?? '';
    if (!code || code.length > 64) return show(req, reply, 400, 'Enter the code from your authenticator app or a recovery code.');
    return finish(req, reply, await gh.mfa.secondStep.withCode(token(req), code, req.ip));
  });

  app.post('/login/second-step/approved', { config: page, schema: { body: formBody(paramsOf('csrf_token')) } }, async (req, reply) => {
    if (!guard(req, reply)) return reply;
    return finish(req, reply, await gh.mfa.secondStep.approved(token(req)));
  });

  /** The long poll: answers `{state}` once the approval leaves `waiting`, or after 25 s. */
  app.get('/login/second-step/wait', async (req, reply) => {
    const abort = new AbortController();
    reply.raw.on('close', () => abort.abort());
    const state = await gh.mfa.secondStep.wait(token(req), WAIT_MS, abort.signal);
    return reply.header('cache-control', 'no-store').send({ state });
  });
}
