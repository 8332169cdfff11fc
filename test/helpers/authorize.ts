import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { parseForm, type Agent } from './agent.js';

export const REDIRECT = 'https://app.example.test/callback';

/** A PKCE verifier and its S256 challenge (RFC 7636 §4.1, §4.2). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface AuthorizeOptions {
  /** Signs in as this person when the server sends the browser to the login page first. */
  user?: { username: string; password: string };
  /** The decision on the consent page, when it comes (default: approve). */
  approve?: boolean;
  /** The authorization endpoint, when the request is given as parameters (default /oauth2). */
  path?: string;
}

/** Where an authorization request ended, and which pages the person met on the way. */
export interface Visited {
  callback: URL;
  sawLogin: boolean;
  sawConsent: boolean;
}

/**
 * The person's part of an authorization request (RFC 6749 §4.1.1): sign in
 * when asked (with `user`), approve or deny when the consent page comes, and
 * say where the server sent the browser (the client's redirect URI, or the
 * login page for an agent not signed in and no `user`) and what it showed.
 */
export async function visit(agent: Agent, request: URL | Record<string, string>, opts: AuthorizeOptions = {}): Promise<Visited> {
  const target = request instanceof URL ? `${request.pathname}${request.search}` : `${opts.path ?? '/oauth2'}?${new URLSearchParams(request)}`;
  let res = await agent.get(target);
  let sawLogin = false;
  if (opts.user && res.status === 302) {
    const next = new URL(res.headers.get('location')!, agent.base);
    if (next.pathname === '/login') {
      sawLogin = true;
      const signedIn = await agent.login(opts.user.username, opts.user.password, next.searchParams.get('return_to')!);
      assert.equal(signedIn.status, 303);
      res = await agent.get(signedIn.headers.get('location')!);
    }
  }
  if (res.status === 200) {
    const form = parseForm(await res.text());
    const decision = await agent.post(form.action, { ...form.fields, approve: String(opts.approve ?? true) });
    assert.equal(decision.status, 303);
    return { callback: new URL(decision.headers.get('location')!, agent.base), sawLogin, sawConsent: true };
  }
  // Anything but a redirect here (an error page) means the flow broke.
  assert.equal(res.status, 302, `authorization answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return { callback: new URL(res.headers.get('location')!, agent.base), sawLogin, sawConsent: false };
}

/** `visit`, when only the destination matters. */
export async function authorize(agent: Agent, request: URL | Record<string, string>, opts: AuthorizeOptions = {}): Promise<URL> {
  return (await visit(agent, request, opts)).callback;
}

/** A fresh authorization code for `clientId` with PKCE S256, through the authorization endpoint; returns it with its verifier. */
export async function issueCode(agent: Agent, clientId: string, extra: Record<string, string> = {}, opts: AuthorizeOptions = {}): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const back = await authorize(agent, {
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 's', code_challenge: challenge, code_challenge_method: 'S256', ...extra,
  }, opts);
  const code = back.searchParams.get('code');
  assert.ok(code, `no code in ${back}`);
  return { code, verifier };
}
