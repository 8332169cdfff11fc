/**
 * Token-endpoint and client-facing mitigations: no caching of tokens
 * (RFC 6749 §5.1), the Basic challenge on failed client authentication
 * (§5.2), POST only unless a deployment opts in (§3.2), introspection only
 * for authenticated resource servers (RFC 7662 §4), implicit and password
 * only for clients allowed them (RFC 9700 §2.1.2, §2.4), and secrets with at
 * least 256 bits of entropy (RFC 6819 §5.1.4.2.2).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Agent } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { authorize, issueCode } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { REDIRECT, basic, expectErrorRedirect, expectOAuthError, get, post } from './support.js';

type Client = { id: string; secret: string | undefined };

/** 256 bits in base64url is 43 characters. */
const HIGH_ENTROPY = /^[A-Za-z0-9_-]{43,}$/;

describe('token endpoint and client mitigations', () => {
  let server: TestServer;
  let agent: Agent;
  let cc: Client;
  let app: Client;
  let rs: Client;
  before(async () => {
    server = await startServer();
    cc = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [], tokenFormat: 'opaque' });
    app = await server.createClient({ trusted: true, tokenFormat: 'opaque' });
    rs = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [], introspect: true });
    agent = await signedIn(server, 'olivia');
    await server.createUser('pat');
  });
  after(() => server.close());

  const ccToken = () => post(server.url, '/oauth/token', { grant_type: 'client_credentials' }, { authorization: basic(cc.id, cc.secret!) });

  // Guards `noStore(reply)` in src/http/auth/oauth-routes.ts and `sendOAuthError` in src/http/common.ts.
  it('token responses, successful or not, are never cached', async () => {
    const ok = await ccToken();
    assert.equal(ok.status, 200);
    const bad = await post(server.url, '/oauth/token', { grant_type: 'client_credentials', client_id: cc.id, client_secret: 'wrong' });
    const check = await post(server.url, '/oauth/check_token', { token: 'x' }, { authorization: basic(rs.id, rs.secret!) });
    for (const res of [ok, bad, check]) {
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(res.headers.get('pragma'), 'no-cache');
    }
  });

  // Guards the `ClientAuthError` branch of `sendOAuthError` in src/http/common.ts.
  it('a failed Basic authentication answers 401 with a WWW-Authenticate challenge', async () => {
    for (const authorization of [basic(cc.id, 'wrong'), basic('nope', 'nope'), 'Basic !!!']) {
      for (const path of ['/oauth/token', '/oauth/check_token', '/oauth/revoke']) {
        const res = await post(server.url, path, { grant_type: 'client_credentials', token: 'x' }, { authorization });
        await expectOAuthError(res, 401, 'invalid_client');
        assert.match(res.headers.get('www-authenticate') ?? '', /^Basic realm="[^"]+"/);
      }
    }
  });

  // Guards `requireMethod` in src/core/oauth/client-auth.ts (RFC 6749 §2.3): a
  // client_secret_basic client got tokens with its secret in the body.
  it('a client authenticates only by the method it registered', async () => {
    const poster = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [], authMethod: 'client_secret_post' });
    const publicApp = await server.createClient({ public: true });
    const cases: [name: string, fields: Record<string, string>, headers: Record<string, string>, challenge: boolean][] = [
      ['client_secret_basic, secret in the body', { client_id: cc.id, client_secret: cc.secret! }, {}, true],
      ['client_secret_basic, no secret', { client_id: cc.id }, {}, true],
      ['client_secret_post, secret in the header', {}, { authorization: basic(poster.id, poster.secret!) }, true],
      ['client_secret_post, no secret', { client_id: poster.id }, {}, false],
      ['none, an empty secret in the header', {}, { authorization: basic(publicApp.id, '') }, true],
      ['none, a secret in the body', { client_id: publicApp.id, client_secret: 'x' }, {}, false],
    ];
    for (const [name, fields, headers, challenge] of cases) {
      for (const path of ['/oauth/token', '/oauth/check_token', '/oauth/revoke']) {
        const res = await post(server.url, path, { grant_type: 'client_credentials', token: 'x', ...fields }, headers);
        await expectOAuthError(res, 401, 'invalid_client');
        // RFC 6749 §5.2: a challenge for the header, never one naming a method the client cannot use.
        assert.equal(/^Basic realm=/.test(res.headers.get('www-authenticate') ?? ''), challenge, `${name} ${path}`);
      }
    }
    // The registered methods themselves work (the control).
    assert.equal((await ccToken()).status, 200);
    assert.equal((await post(server.url, '/oauth/token', { grant_type: 'client_credentials', client_id: poster.id, client_secret: poster.secret! })).status, 200);
  });

  // Guards `if (gh.config.tokenEndpointGet)` in src/http/auth/oauth-routes.ts.
  it('GET on the token endpoint is refused with 405 unless the deployment opts in', async () => {
    const q = new URLSearchParams({ grant_type: 'client_credentials', client_id: cc.id, client_secret: cc.secret! });
    for (const path of ['/oauth/token', '/login/oauth/access_token']) {
      const res = await get(server.url, `${path}?${q}`);
      await expectOAuthError(res, 405, 'invalid_request');
      assert.equal(res.headers.get('allow'), 'POST');
    }
    const open = await startServer({ env: { GATEHOUSE_TOKEN_ENDPOINT_GET: 'true' } });
    try {
      const c = await open.createClient({ grantTypes: ['client_credentials'], redirectUris: [], authMethod: 'client_secret_post' });
      const res = await get(open.url, `/login/oauth/access_token?${new URLSearchParams({ grant_type: 'client_credentials', client_id: c.id, client_secret: c.secret! })}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(((await res.json()) as { token_type: string }).token_type, 'Bearer');
    } finally {
      await open.close();
    }
  });

  // Guards `authenticateClient` and `if (!client.introspect)` in src/core/oauth/introspection.ts.
  it('introspection is closed to anonymous callers and to clients not allowed to introspect', async () => {
    const { access_token } = (await (await ccToken()).json()) as { access_token: string };
    await expectOAuthError(await post(server.url, '/oauth/check_token', { token: access_token }), 401, 'invalid_client');
    await expectOAuthError(await post(server.url, '/oauth/check_token', { token: access_token, client_id: cc.id }), 401, 'invalid_client');
    // The token's own client, authenticated, but not a resource server.
    await expectOAuthError(await post(server.url, '/oauth/check_token', { token: access_token }, { authorization: basic(cc.id, cc.secret!) }), 403, 'unauthorized_client');
    const res = await post(server.url, '/oauth/check_token', { token: access_token }, { authorization: basic(rs.id, rs.secret!) });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { active: boolean }).active, true);
  });

  it('token_key needs client authentication; the JWKS at the metadata URL is public', async () => {
    await expectOAuthError(await get(server.url, '/oauth/token_key'), 401, 'invalid_client');
    assert.equal((await get(server.url, '/oauth/token_key', { authorization: basic(cc.id, cc.secret!) })).status, 200);
    assert.equal((await get(server.url, '/.well-known/jwks.json')).status, 200);
  });

  // Guards `client.grantTypes.includes(grant)` in src/core/oauth/authorize.ts.
  it('the implicit grant is refused for a client not allowed it', async () => {
    const res = await agent.get(`/oauth2?${new URLSearchParams({ response_type: 'token', client_id: app.id, redirect_uri: REDIRECT, state: 'st' })}`);
    const loc = expectErrorRedirect(res, { redirectUri: REDIRECT, issuer: server.url, error: 'unauthorized_client', state: 'st', fragment: true });
    assert.equal(new URLSearchParams(loc.hash.slice(1)).get('access_token'), null);
  });

  // Guards `client.grantTypes.includes(grantType)` in src/core/oauth/token-endpoint.ts.
  it('the password grant is refused for a client not allowed it, even with the right password', async () => {
    const fields = { grant_type: 'password', username: 'pat', password: 'correct horse battery staple' };
    await expectOAuthError(await post(server.url, '/oauth/token', fields, { authorization: basic(app.id, app.secret!) }), 400, 'unauthorized_client');
    const allowed = await server.createClient({ grantTypes: ['password'], redirectUris: [] });
    assert.equal((await post(server.url, '/oauth/token', fields, { authorization: basic(allowed.id, allowed.secret!) })).status, 200);
  });

  // Guards `randomToken(32)` in src/core/crypto.ts and its callers (createClient, codes, tokens, sessions).
  it('every secret it generates carries at least 256 bits', async () => {
    const seen = new Set<string>();
    const check = (label: string, value: string | null | undefined, prefix = '') => {
      assert.ok(value?.startsWith(prefix), `${label}: ${value}`);
      const random = value!.slice(prefix.length);
      assert.match(random, HIGH_ENTROPY, `${label} has fewer than 43 base64url characters: ${random}`);
      assert.ok(!seen.has(random), `${label} repeated`);
      seen.add(random);
    };
    for (let i = 0; i < 3; i++) {
      check('client_secret', (await server.createClient({})).secret);
      const back = await authorize(agent, { response_type: 'code', client_id: app.id, redirect_uri: REDIRECT });
      check('authorization code', back.searchParams.get('code'));
      const { code, verifier } = await issueCode(agent, app.id);
      const tokens = (await (await post(server.url, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT },
        { authorization: basic(app.id, app.secret!) })).json()) as { access_token: string; refresh_token: string };
      check('opaque access token', tokens.access_token, 'gh_at_');
      check('refresh token', tokens.refresh_token, 'gh_rt_');
      check('session id', (await signedIn(server, `user${i}`)).cookie('gh_session'));
    }
    const admin = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: 'admin-token-for-the-entropy-test-000' } });
    try {
      const c = await admin.createClient({});
      const res = await post(admin.url, `/admin/clients/${c.id}/secret`, '', { authorization: 'Bearer admin-token-for-the-entropy-test-000' });
      check('rotated client_secret', ((await res.json()) as { client_secret: string }).client_secret);
    } finally {
      await admin.close();
    }
  });
});
