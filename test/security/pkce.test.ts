/**
 * PKCE (RFC 7636) as RFC 9700 §2.1.1 wants it: required for public clients,
 * S256 only, and no verifier accepted for a code issued without a challenge
 * (the downgrade attack).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Agent } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { authorize, pkce } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { REDIRECT, basic, expectErrorRedirect, expectOAuthError, get, post } from './support.js';

describe('PKCE', () => {
  let server: TestServer;
  let agent: Agent;
  let pub: { id: string };
  let conf: { id: string; secret: string | undefined };
  before(async () => {
    server = await startServer();
    pub = await server.createClient({ public: true, trusted: true });
    conf = await server.createClient({ trusted: true });
    agent = await signedIn(server, 'kim');
  });
  after(() => server.close());

  const redeemPublic = (code: string, extra: Record<string, string> = {}) =>
    post(server.url, '/oauth/token', { grant_type: 'authorization_code', client_id: pub.id, code, redirect_uri: REDIRECT, ...extra });

  // Guards the `isPublic(client)` branch of src/core/oauth/authorize.ts `validate`.
  it('is required for public clients', async () => {
    const res = await agent.get(`/oauth2?${new URLSearchParams({ response_type: 'code', client_id: pub.id, redirect_uri: REDIRECT, state: 'st' })}`);
    expectErrorRedirect(res, { redirectUri: REDIRECT, issuer: server.url, error: 'invalid_request', state: 'st' });
  });

  // Guards `if (!verifier) throw invalidGrant('code_verifier required')` in src/core/oauth/grants/authorization-code.ts.
  it('a code issued with a challenge needs the verifier, and the right one', async () => {
    for (const extra of [{}, { code_verifier: pkce().verifier }] as Record<string, string>[]) {
      const { challenge } = pkce();
      const back = await authorize(agent, { response_type: 'code', client_id: pub.id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' });
      await expectOAuthError(await redeemPublic(back.searchParams.get('code')!, extra), 400, 'invalid_grant');
    }
  });

  // Guards the `else if (verifier !== undefined)` downgrade check in src/core/oauth/grants/authorization-code.ts.
  it('refuses a verifier for a code issued without a challenge (downgrade)', async () => {
    const back = await authorize(agent, { response_type: 'code', client_id: conf.id, redirect_uri: REDIRECT });
    const res = await post(server.url, '/oauth/token', { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: pkce().verifier },
      { authorization: basic(conf.id, conf.secret!) });
    const body = await expectOAuthError(res, 400, 'invalid_grant');
    assert.match(body.error_description ?? '', /code_challenge/);
  });

  // Guards `if (method !== 'S256')` in src/core/oauth/authorize.ts: plain (or a
  // missing method, which RFC 7636 §4.3 defaults to plain) is refused.
  it('refuses the plain method and a challenge without a method', async () => {
    for (const method of ['plain', undefined]) {
      const { verifier } = pkce();
      const q = new URLSearchParams({ response_type: 'code', client_id: pub.id, redirect_uri: REDIRECT, state: 'st', code_challenge: verifier });
      if (method) q.set('code_challenge_method', method);
      expectErrorRedirect(await agent.get(`/oauth2?${q}`), { redirectUri: REDIRECT, issuer: server.url, error: 'invalid_request', state: 'st' });
    }
    const meta = (await (await get(server.url, '/.well-known/oauth-authorization-server')).json()) as { code_challenge_methods_supported: string[] };
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
  });

  it('a public client with the right verifier gets its tokens (the control)', async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize(agent, { response_type: 'code', client_id: pub.id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' });
    assert.equal((await redeemPublic(back.searchParams.get('code')!, { code_verifier: verifier })).status, 200);
  });
});
