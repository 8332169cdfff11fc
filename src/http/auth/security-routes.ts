import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { single, type Params } from '../../core/params.js';
import { csrfToken } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { recoveryCodesPage, securityPage, type SecurityView } from '../pages/security.js';
import { currentSession } from './session-cookie.js';
import { signedInForm } from './signed-in-form.js';
import { sendScriptedPage } from './second-step-routes.js';
import { reauthRoutes, recentAuthentication } from './reauth.js';

const SECURITY = 'security';
const PATH = '/account/security';

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

/** The QR code of the otpauth:// URI as inline SVG, drawn here (nothing is fetched from elsewhere). */
async function qrSvg(uri: string): Promise<string> {
  // Loaded when someone sets up an authenticator app, not at every start.
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return svg.replace('<svg ', '<svg width="220" height="220" role="img" aria-label="QR code of the authenticator link" ');
}

const NOTICES = new Map([
  ['totp', 'The authenticator app is on. Signing in now asks for a code.'],
  ['totp-removed', 'The authenticator app was removed.'],
  ['chat-on', 'Sign-in approval in chat is on.'],
  ['chat-asked', 'We sent a message to your linked chat: tap "Turn on" there within 10 minutes. Until then approval in chat stays off.'],
  ['chat-off', 'Sign-in approval in chat is off.'],
  ['passkey', 'The passkey was added. You can sign in with it without a password.'],
  ['passkey-removed', 'The passkey was removed.'],
]);

/**
 * {auth_url}/account/security: the signed-in person's second factors
 * (docs/security.md). Plain forms, each with a CSRF token bound to the session.
 */
export async function securityRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };
  const { factors } = gh.mfa;
  await reauthRoutes(app, gh);

  const show = async (req: FastifyRequest, reply: FastifyReply, extra: Partial<SecurityView> = {}, status = 200) => {
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect(`/login?return_to=${encodeURIComponent(PATH)}`, 302);
    const o = await factors.overview(current.user.id);
    let setup: SecurityView['setup'];
    if (o.totp === 'pending') {
      const s = await factors.startTotp(current.user);
      if (s) setup = { ...s, qrSvg: await qrSvg(s.uri) };
    }
    const linked = await gh.mfa.approval.linkedChat(current.user.id);
    return sendScriptedPage(reply, status, securityPage({
      username: current.user.username, csrf: csrfToken(current.id, SECURITY), totp: o.totp, passkeys: o.passkeys,
      recoveryCodesLeft: o.recoveryCodesLeft, chatApproval: linked ? o.chatApproval : undefined, ...(setup ? { setup } : {}), ...extra,
    }));
  };

  app.get(PATH, { config: page, schema: { querystring: paramsOf('done') } }, (req, reply) => {
    const done = (req.query as Params).done;
    const notice = typeof done === 'string' ? NOTICES.get(done) : undefined;
    return show(req, reply, notice ? { notice } : {});
  });

  /**
   * Signed in, the page's CSRF token, and sudo mode (src/http/auth/reauth.ts):
   * every change here alters how the account is protected.
   */
  const guard = async (req: FastifyRequest, reply: FastifyReply, opts: { codes?: boolean } = {}) => {
    const ok = await signedInForm(gh, req, reply, { path: PATH, purpose: SECURITY, name: 'security page' });
    if (!ok) return undefined;
    return (await recentAuthentication(gh, req, reply, ok.current, ok.body, { action: req.routeOptions.url ?? PATH, page: PATH, ...opts })) ? ok : undefined;
  };

  /** The proof a removal asks for: the password, or a code of another factor. */
  const proven = async (req: FastifyRequest, reply: FastifyReply, ok: NonNullable<Awaited<ReturnType<typeof signedInForm>>>) => {
    const password = field(ok.body, 'password');
    const code = field(ok.body, 'code')?.trim();
    if ((!password && !code) || (code && code.length > 64) || (password && password.length > 1024)) {
      await show(req, reply, { error: 'Enter your password, or a code, to remove it.' }, 400);
      return false;
    }
    const check = await gh.reauth.prove(ok.current.session, ok.current.user, { password, code }, req.ip);
    if (check.ok) return true;
    if (check.reason === 'locked') {
      reply.header('retry-after', String(check.retryAfterSeconds));
      await show(req, reply, { error: 'Too many wrong attempts. Wait 15 minutes and try again.' }, 429);
    } else {
      await show(req, reply, { error: 'That password or code is not right. Nothing was removed.' }, 401);
    }
    return false;
  };

  app.post(`${PATH}/totp/start`, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'password', 'code')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    if (!(await factors.startTotp(ok.current.user))) return show(req, reply, { error: 'The authenticator app is already on.' }, 409);
    return reply.redirect(`${PATH}#totp`, 303);
  });

  app.post(`${PATH}/totp/confirm`, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'code', 'password')) } }, async (req, reply) => {
    // Its own `code` is the new app's: only the password re-authenticates here.
    const ok = await guard(req, reply, { codes: false });
    if (!ok) return reply;
    const code = field(ok.body, 'code')?.trim() ?? '';
    if (!/^\d{6}$/.test(code)) return show(req, reply, { error: 'Enter the 6-digit code your app shows.' }, 400);
    const r = await factors.confirmTotp(ok.current.user.id, code, req.ip);
    if (!r.ok) {
      if (r.reason === 'locked') reply.header('retry-after', String(r.retryAfterSeconds));
      return show(req, reply, { error: r.reason === 'locked' ? 'Too many wrong codes. Wait 15 minutes and try again.' : 'That code is not right. Check the time on your phone and try the next code.' }, r.reason === 'locked' ? 429 : 400);
    }
    if (r.recoveryCodes) return sendPage(reply, 200, recoveryCodesPage(r.recoveryCodes));
    return reply.redirect(`${PATH}?done=totp`, 303);
  });

  // Removing always asks for the proof, however recent the last one (which the proof renews).
  app.post(`${PATH}/totp/remove`, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'password', 'code')) } }, async (req, reply) => {
    const ok = await signedInForm(gh, req, reply, { path: PATH, purpose: SECURITY, name: 'security page' });
    if (!ok) return reply;
    if (!(await proven(req, reply, ok))) return reply;
    if (!(await factors.removeTotp(ok.current.user.id))) return show(req, reply, { error: 'There is no authenticator app to remove.' }, 404);
    // Recovery codes stand in for an app or passkey; with neither left they would be a password of their own.
    if (!(await factors.hasCodeFactor(ok.current.user.id))) await factors.removeRecoveryCodes(ok.current.user.id);
    return reply.redirect(`${PATH}?done=totp-removed`, 303);
  });

  app.post(`${PATH}/recovery-codes`, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'password', 'code')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    if (!(await factors.hasCodeFactor(ok.current.user.id))) return show(req, reply, { error: 'Turn on an authenticator app or add a passkey first.' }, 409);
    return sendPage(reply, 200, recoveryCodesPage(await factors.newRecoveryCodes(ok.current.user.id)));
  });

  app.post(`${PATH}/chat-approval`, { config: page, schema: { body: formBody(paramsOf('csrf_token', 'enabled', 'password', 'code')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const enabled = field(ok.body, 'enabled');
    if (enabled !== 'on' && enabled !== 'off') return show(req, reply, { error: 'Choose on or off.' }, 400);
    if (enabled === 'off') {
      await factors.setChatApproval(ok.current.user.id, false);
      return reply.redirect(`${PATH}?done=chat-off`, 303);
    }
    // On only by a tap in the linked chat (src/core/mfa/approval-setup.ts): a link that does not reach the person cannot lock them out.
    const asked = await gh.mfa.approvalSetup.request(ok.current.user);
    if (asked === 'no_chat') return show(req, reply, { error: 'Link your chat to the notification bot first: send /start to it.' }, 409);
    if (asked === 'failed') return show(req, reply, { error: 'Your chat could not be reached. Approval in chat stays off; try again later.' }, 503);
    return reply.redirect(`${PATH}?done=chat-asked`, 303);
  });
}
