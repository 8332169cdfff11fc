import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { GatehouseError, invalidRequest } from '../../core/errors.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import { recordAdminAction, type Admin, type AdminAction } from '../../core/console/actions.js';
import type { ConsoleStore } from '../../core/console/ports.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { currentSession } from '../auth/session-cookie.js';
import { html, type Raw } from '../pages/html.js';
import { consoleLayout, type Chrome } from './layout.js';

/**
 * The console and the JSON admin API answer at the same paths
 * (`GET /admin/clients`, `POST /admin/keys/rotate`, …). A request with an
 * `Authorization` header, or one that does not ask for HTML, keeps reaching
 * the API exactly as before; a browser (no `Authorization`, `Accept:
 * text/html`) reaches the console. Console routes carry this constraint; the
 * API's routes carry none, so they answer every request the console does not take.
 */
export const ADMIN_CLIENT = 'gatehouseAdminClient';

export const adminClientStrategy = {
  name: ADMIN_CLIENT,
  storage() {
    const handlers = new Map<string, unknown>();
    return {
      get: (value: string) => (handlers.get(value) ?? null) as never,
      set: (value: string, store: unknown) => void handlers.set(value, store),
    };
  },
  deriveConstraint(req: { headers: Record<string, string | string[] | undefined> }) {
    if (req.headers.authorization !== undefined) return 'api';
    const accept = req.headers.accept;
    return typeof accept === 'string' && accept.includes('text/html') ? 'console' : 'api';
  },
  mustMatchWhenDerived: false,
} as unknown as Parameters<FastifyInstance['addConstraintStrategy']>[0];

/** Options of every console route: an HTML error page, and only browsers. */
export const PAGE: RouteShorthandOptions = { config: { kind: 'page' }, constraints: { [ADMIN_CLIENT]: 'console' } };
export const form = (...names: string[]): RouteShorthandOptions => ({ ...PAGE, schema: { body: formBody(paramsOf('csrf_token', ...names)) } });

const CSRF_PURPOSE = 'admin-console';

export interface AdminRequest {
  admin: Admin;
  csrf: string;
  body: Params;
  store: ConsoleStore;
  /** Records the action as an `admin.action` event (docs/events.md). */
  record(action: AdminAction, target: { type: string; id: string }): Promise<void>;
  page(status: number, title: string, chrome: Omit<Chrome, 'username'>, body: Raw): FastifyReply;
}

/** One value of a form or query; repeated or absent is undefined. */
export function field(params: Params, name: string): string | undefined {
  try {
    return single(params, name);
  } catch {
    return undefined;
  }
}

/**
 * Signed in (or sent to the login page, which asks for the second factor
 * when the account has one), an administrator (403 otherwise), and for a
 * POST a form with this session's CSRF token (403 otherwise). Undefined
 * when the answer has been sent.
 */
export async function adminGate(gh: Gatehouse, req: FastifyRequest, reply: FastifyReply): Promise<AdminRequest | undefined> {
  const store = gh.console;
  const post = req.method === 'POST';
  const bare = (status: number, title: string, message: string) =>
    sendPage(reply, status, consoleLayout(title, { section: 'home' }, html`<h1>${title}</h1><p class="error" role="alert">${message}</p><p class="links"><a href="/">Gatehouse home</a></p>`));
  const current = await currentSession(gh, req);
  if (!current) {
    const back = post ? '/admin' : req.url;
    reply.redirect(`/login?return_to=${encodeURIComponent(back)}`, post ? 303 : 302);
    return undefined;
  }
  if (!(await store.isAdmin(current.user.id)) || (await store.isLocked(current.user.id))) {
    bare(403, 'Not allowed', `The admin console is for administrators, and ${current.user.username} is not one. An administrator is created with gatehouse user create … --admin.`);
    return undefined;
  }
  const body = (post && isForm(req) ? req.body ?? {} : {}) as Params;
  if (post && (!isForm(req) || !csrfValid(current.id, CSRF_PURPOSE, body.csrf_token))) {
    bare(403, 'Request expired', 'This form is no longer valid. Go back, reload the page and try again.');
    return undefined;
  }
  const admin: Admin = { userId: current.user.id, username: current.user.username, ip: req.ip };
  return {
    admin, body, store,
    csrf: csrfToken(current.id, CSRF_PURPOSE),
    record: (action, target) => recordAdminAction(gh.storage, gh.clock, admin, action, target),
    page: (status, title, chrome, content) => sendPage(reply, status, consoleLayout(title, { ...chrome, username: admin.username }, content)),
  };
}

/** The hidden field every console form carries. */
export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf_token" value="${csrf}">`;

/**
 * A refusal of the input (a bad redirect URI, an unknown id) as the message
 * to show beside the form; anything else is rethrown (the page error handler).
 */
export function refusal(e: unknown): { status: number; message: string } {
  if (e instanceof GatehouseError && e.status < 500) return { status: e.status, message: e.description ?? e.code };
  throw e;
}

/** A path id as typed: bounded, printable, so it can be looked up and shown. */
export function pathId(value: string): string {
  if (!value || value.length > 255 || /[\x00-\x1f\x7f]/.test(value)) throw invalidRequest('malformed id');
  return value;
}
