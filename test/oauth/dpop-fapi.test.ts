import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import { Agent } from '../helpers/agent.js';
import { REDIRECT } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { dpopKey, proof } from './dpop-support.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/**
 * PAR + PKCE + DPoP + private_key_jwt in one flow, as FAPI 2.0 asks, with
 * oauth4webapi: the proof at the PAR endpoint binds the code (RFC 9449 §10.1),
 * the one at the token endpoint binds the tokens, /user takes them with a proof.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`PAR + PKCE + DPoP + private_key_jwt with oauth4webapi (${kind})`, { skip }, () => {
    let server: TestServer;
    let alice: { username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind });
      alice = await server.createUser('alice');
    });
    after(() => server.close());

    async function flow(pushKey: Awaited<ReturnType<typeof dpopKey>>, extra: Record<string, string> = {}) {
      const signing = await jose.generateKeyPair('ES256', { extractable: true });
      const kid = randomUUID();
      const jwk = { ...(await jose.exportJWK(signing.publicKey)), kid, alg: 'ES256', use: 'sig' };
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true, requirePar: true, dpop: true, authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }) });
      const as = await oauth.processDiscoveryResponse(new URL(server.url), await oauth.discoveryRequest(new URL(server.url), { algorithm: 'oauth2', ...insecure }));
      const client: oauth.Client = { client_id: c.id };
      const auth = oauth.PrivateKeyJwt({ key: signing.privateKey, kid });
      const DPoP = oauth.DPoP(client, { privateKey: pushKey.privateKey, publicKey: pushKey.publicKey });
      const verifier = oauth.generateRandomCodeVerifier();
      const pushed = await oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, auth, {
        redirect_uri: REDIRECT, response_type: 'code', scope: 'user', state: 'st', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra,
      }, { DPoP, ...insecure }));
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      const res = await agent.get(`/oauth2?${new URLSearchParams({ client_id: c.id, request_uri: pushed.request_uri })}`);
      assert.equal(res.status, 302);
      const params = oauth.validateAuthResponse(as, client, new URL(res.headers.get('location')!), 'st');
      return { as, client, auth, verifier, params, c };
    }

    it('one flow: the code, the tokens and the /user call are bound to one key', async () => {
      const key = await dpopKey();
      const { as, client, auth, verifier, params } = await flow(key);
      const DPoP = oauth.DPoP(client, { privateKey: key.privateKey, publicKey: key.publicKey });
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, { DPoP, ...insecure }));
      assert.equal(tokens.token_type, 'dpop');
      assert.deepEqual((jose.decodeJwt(tokens.access_token).cnf as Record<string, string>).jkt, key.jkt);
      const me = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${server.apiUrl}/user`), undefined, undefined, { DPoP, ...insecure });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { username: string }).username, 'alice');
    });

    it('the code pushed with one key is refused with another (invalid_grant), and a dpop_jkt naming another key is refused at PAR', async () => {
      const key = await dpopKey();
      const { client, auth, verifier, params } = await flow(key);
      const other = await dpopKey();
      const body = new URLSearchParams({ grant_type: 'authorization_code', code: params.get('code')!, redirect_uri: REDIRECT, code_verifier: verifier, client_id: client.client_id });
      // oauth4webapi's client authentication adds the assertion to the body.
      await auth({ issuer: server.url, token_endpoint: `${server.url}/oauth/token` }, client, body, new Headers());
      const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await proof(other, 'POST', `${server.url}/oauth/token`) }, body });
      const answer = (await res.json()) as { error: string };
      assert.deepEqual([res.status, answer.error], [400, 'invalid_grant']);

      await assert.rejects(flow(key, { dpop_jkt: other.jkt }), (e: Error & { error?: string; status?: number }) => e.error === 'invalid_dpop_proof' && e.status === 400);
    });
  });
}
