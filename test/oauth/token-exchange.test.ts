import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { certDir, type TestCert } from '../mtls/support.js';
import { dpopKey, proof, type DpopKey } from './dpop-support.js';

const TE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';
const RS = 'https://rs.example.test/';
const DOWNSTREAM = 'https://downstream.example.test/';
const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const basic = (c: { id: string; secret?: string | undefined }) => `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;
type Client = { id: string; secret: string | undefined };
type Answer = { status: number; body: Record<string, unknown> };

async function token(server: { url: string }, client: Client, params: Record<string, string | string[]>): Promise<Answer> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`token exchange, RFC 8693 (${kind})`, { skip }, () => {
    let server: TestServer;
    let app: Client;
    let opaqueApp: Client;
    let stranger: Client;
    let resourceServer: Client;
    let noExchange: Client;
    let introspector: Client;
    let alice: { id: string; username: string; password: string };
    /** Alice's access and refresh token, issued to `app` by the code flow. */
    let subject: { access: string; refresh: string };
    const exchange = (c: Client, extra: Record<string, string | string[]> = {}) =>
      token(server, c, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, ...extra });

    before(async () => {
      server = await startServer({ db: kind });
      const grants = ['authorization_code', 'refresh_token', 'client_credentials', TE];
      app = await server.createClient({ grantTypes: grants, scope: 'user email', resources: [RS] });
      opaqueApp = await server.createClient({ grantTypes: grants, scope: 'user email', tokenFormat: 'opaque' });
      stranger = await server.createClient({ grantTypes: ['client_credentials', TE], scope: 'user' });
      resourceServer = await server.createClient({ grantTypes: ['client_credentials', TE], scope: 'user', resources: [RS, DOWNSTREAM] });
      noExchange = await server.createClient({ grantTypes: ['client_credentials'], scope: 'user' });
      introspector = await server.createClient({ grantTypes: ['client_credentials'], introspect: true });
      alice = await server.createUser('alice');
      const agent = new Agent(server.url);
      const { code, verifier } = await issueCode(agent, app.id, { scope: 'user email' }, { user: alice });
      const t = await token(server, app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT });
      subject = { access: String(t.body.access_token), refresh: String(t.body.refresh_token) };
    });
    after(async () => server?.close());

    const introspect = async (t: string) => {
      const res = await fetch(`${server.url}/oauth/check_token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(introspector) }, body: new URLSearchParams({ token: t }) });
      return (await res.json()) as Record<string, unknown>;
    };

    it('is advertised in grant_types_supported', async () => {
      const meta = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as { grant_types_supported: string[] };
      assert.ok(meta.grant_types_supported.includes(TE));
    });

    it('exchanges a subject token for a narrower one: same person, issued_token_type, no refresh token; /user works', async () => {
      const r = await exchange(app, { scope: 'user' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.issued_token_type, AT);
      assert.equal(r.body.token_type, 'Bearer');
      assert.equal(r.body.scope, 'user');
      assert.equal(r.body.refresh_token, undefined);
      const claims = payloadOf(String(r.body.access_token));
      assert.equal(claims.sub, alice.id);
      assert.equal(claims.aud, server.apiUrl);
      assert.equal(claims.act, undefined);
      const me = await fetch(`${server.apiUrl}/user`, { headers: { authorization: `Bearer ${String(r.body.access_token)}` } });
      assert.equal(me.status, 200);
      // requested_token_type jwt; an opaque client's default is opaque, a JWT when asked.
      assert.equal((await exchange(app, { requested_token_type: JWT })).body.issued_token_type, JWT);
    });

    it('a wider scope is invalid_scope', async () => {
      const r = await exchange(app, { scope: 'user chat' });
      assert.equal(r.status, 400);
      assert.equal(r.body.error, 'invalid_scope');
    });

    it('delegation: actor_token gives an act claim; a second exchange nests the earlier actor (§4.1); introspection shows it', async () => {
      const actor = await token(server, app, { grant_type: 'client_credentials', scope: 'user' });
      const r = await exchange(app, { actor_token: String(actor.body.access_token), actor_token_type: AT });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(payloadOf(String(r.body.access_token)).act, { sub: app.id, client_id: app.id });
      const again = await token(server, app, { grant_type: TE, subject_token: String(r.body.access_token), subject_token_type: JWT, actor_token: String(actor.body.access_token), actor_token_type: AT });
      assert.deepEqual(payloadOf(String(again.body.access_token)).act, { sub: app.id, client_id: app.id, act: { sub: app.id, client_id: app.id } });
      assert.deepEqual((await introspect(String(again.body.access_token))).act, { sub: app.id, client_id: app.id, act: { sub: app.id, client_id: app.id } });
      // An opaque exchanged token keeps its act and audience for introspection.
      const opaqueActor = await token(server, opaqueApp, { grant_type: 'client_credentials', scope: 'user' });
      const mine = await issueCode(new Agent(server.url), opaqueApp.id, { scope: 'user' }, { user: alice });
      const opaqueSubject = await token(server, opaqueApp, { grant_type: 'authorization_code', code: mine.code, code_verifier: mine.verifier, redirect_uri: REDIRECT });
      const o = await token(server, opaqueApp, { grant_type: TE, subject_token: String(opaqueSubject.body.access_token), subject_token_type: AT, actor_token: String(opaqueActor.body.access_token), actor_token_type: AT });
      assert.equal(o.status, 200, JSON.stringify(o.body));
      const info = await introspect(String(o.body.access_token));
      assert.equal(info.active, true);
      assert.deepEqual(info.act, { sub: opaqueApp.id, client_id: opaqueApp.id });
    });

    it('a resource server exchanges a token addressed to it for a downstream audience; others may not exchange it', async () => {
      const forRs = await exchange(app, { resource: RS });
      assert.equal(payloadOf(String(forRs.body.access_token)).aud, RS);
      const down = await token(server, resourceServer, { grant_type: TE, subject_token: String(forRs.body.access_token), subject_token_type: AT, audience: DOWNSTREAM });
      assert.equal(down.status, 200, JSON.stringify(down.body));
      const claims = payloadOf(String(down.body.access_token));
      assert.equal(claims.aud, DOWNSTREAM);
      assert.equal(claims.sub, alice.id);
      assert.equal(claims.client_id, resourceServer.id);
      // A token not addressed to it, and any token for a stranger: invalid_request (§2.2.2).
      assert.equal((await exchange(resourceServer)).body.error, 'invalid_request');
      assert.equal((await exchange(stranger)).body.error, 'invalid_request');
    });

    it('every bad parameter: the RFC error, never a 5xx, no token', async () => {
      const actor = await token(server, app, { grant_type: 'client_credentials', scope: 'user' });
      const strangerToken = await token(server, stranger, { grant_type: 'client_credentials', scope: 'user' });
      const cases: [string, Client, Record<string, string | string[]>, string][] = [
        ['no subject_token', app, { grant_type: TE, subject_token_type: AT }, 'invalid_request'],
        ['no subject_token_type', app, { grant_type: TE, subject_token: subject.access }, 'invalid_request'],
        ['unknown subject_token_type', app, { grant_type: TE, subject_token: subject.access, subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }, 'invalid_request'],
        ['a refresh token as subject', app, { grant_type: TE, subject_token: subject.refresh, subject_token_type: AT }, 'invalid_request'],
        ['garbage subject', app, { grant_type: TE, subject_token: 'nope', subject_token_type: AT }, 'invalid_request'],
        ['a tampered JWT', app, { grant_type: TE, subject_token: `${subject.access}x`, subject_token_type: JWT }, 'invalid_request'],
        ['repeated subject_token', app, { grant_type: TE, subject_token: [subject.access, subject.access], subject_token_type: AT }, 'invalid_request'],
        ['actor_token without its type', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, actor_token: String(actor.body.access_token) }, 'invalid_request'],
        ['actor_token_type without a token', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, actor_token_type: AT }, 'invalid_request'],
        ['someone else\'s actor token', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, actor_token: String(strangerToken.body.access_token), actor_token_type: AT }, 'invalid_request'],
        ['garbage actor token', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, actor_token: 'x', actor_token_type: AT }, 'invalid_request'],
        ['unknown requested_token_type', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, requested_token_type: 'urn:ietf:params:oauth:token-type:id_token' }, 'invalid_request'],
        ['unknown audience', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, audience: 'billing' }, 'invalid_target'],
        ['malformed resource', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, resource: 'not a uri' }, 'invalid_target'],
        ['resource not allowed', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, resource: DOWNSTREAM }, 'invalid_target'],
        ['malformed scope', app, { grant_type: TE, subject_token: subject.access, subject_token_type: AT, scope: 'a"b' }, 'invalid_scope'],
        ['client not registered for the grant', noExchange, { grant_type: TE, subject_token: subject.access, subject_token_type: AT }, 'unauthorized_client'],
      ];
      for (const [what, c, params, error] of cases) {
        const r = await token(server, c, params);
        assert.equal(r.status, 400, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, error, `${what}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.access_token, undefined, what);
      }
    });

    it('an exchanged token belongs to the subject\'s grant: revoking the grant ends it; a revoked subject cannot be exchanged', async () => {
      const exchanged = await exchange(app);
      assert.equal((await introspect(String(exchanged.body.access_token))).active, true);
      const res = await fetch(`${server.url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app) }, body: new URLSearchParams({ token: subject.refresh }) });
      assert.equal(res.status, 200);
      assert.equal((await introspect(String(exchanged.body.access_token))).active, false);
      const r = await exchange(app);
      assert.equal(r.status, 400);
      assert.equal(r.body.error, 'invalid_request');
    });
  });
}

/** Issue 24, finding 3: sender constraints survive the exchange; an exchanged token ends with its subject. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`token exchange keeps sender constraints (${kind})`, { skip }, () => {
    const clock = { offset: 0, now() { return Date.now() + this.offset; } };
    let server: TestServer;
    let proxied: TestServer;
    let alice: { id: string; username: string; password: string };
    const certs = certDir();
    const cert = certs.make('bound-app');
    const other = certs.make('other');
    const tokenUrl = () => `${server.url}/oauth/token`;
    async function post(s: TestServer, params: Record<string, string>, opts: { client: Client; dpop?: string; cert?: TestCert }): Promise<Answer> {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      const form = { ...params };
      if (opts.client.secret) headers.authorization = basic(opts.client);
      else form.client_id = opts.client.id;
      if (opts.dpop) headers.dpop = opts.dpop;
      if (opts.cert) headers['x-client-cert'] = encodeURIComponent(opts.cert.cert);
      const res = await fetch(`${s.url}/oauth/token`, { method: 'POST', headers, body: new URLSearchParams(form) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }
    /** A code-flow token for alice, with a DPoP proof by `key` when given. */
    async function userToken(c: Client, key?: DpopKey): Promise<Answer> {
      const { code, verifier } = await issueCode(new Agent(server.url), c.id, { scope: 'user' }, { user: alice });
      const dpop = key ? await proof(key, 'POST', tokenUrl()) : undefined;
      return post(server, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT }, { client: c, ...(dpop ? { dpop } : {}) });
    }
    const exchangeOf = (subjectToken: string, extra: Record<string, string> = {}) => ({ grant_type: TE, subject_token: subjectToken, subject_token_type: AT, ...extra });

    before(async () => {
      server = await startServer({ db: kind, clock });
      proxied = await startServer({ db: kind, env: { GATEHOUSE_TRUST_PROXY: 'loopback', GATEHOUSE_CLIENT_CERT_HEADER: 'X-Client-Cert' } });
      alice = await server.createUser('alice');
    });
    after(async () => {
      await server?.close();
      await proxied?.close();
      certs.cleanup();
    });

    it('a public client may not exchange (unauthorized_client) unless the operator allowed it', async () => {
      const spa = await server.createClient({ public: true, grantTypes: ['authorization_code', TE], scope: 'user' });
      const t = await userToken(spa);
      assert.equal(t.status, 200, JSON.stringify(t.body));
      const r = await post(server, exchangeOf(String(t.body.access_token)), { client: spa });
      assert.deepEqual([r.status, r.body.error, r.body.access_token], [400, 'unauthorized_client', undefined]);
      const allowed = await server.createClient({ public: true, publicTokenExchange: true, grantTypes: ['authorization_code', TE], scope: 'user' });
      const mine = await userToken(allowed);
      assert.equal((await post(server, exchangeOf(String(mine.body.access_token)), { client: allowed })).status, 200);
      // The option is for public clients only: a confidential client may always exchange.
      await assert.rejects(server.createClient({ publicTokenExchange: true, grantTypes: [TE] }), /public clients/);
    });

    it('a DPoP-bound subject is exchanged only with a proof of its key, and the new token stays bound to it', async () => {
      const spa = await server.createClient({ public: true, publicTokenExchange: true, grantTypes: ['authorization_code', TE], scope: 'user' });
      const key = await dpopKey();
      const stolen = await userToken(spa, key);
      assert.equal(stolen.body.token_type, 'DPoP', JSON.stringify(stolen.body));
      const subjectToken = String(stolen.body.access_token);
      // The thief: no proof, or a proof by its own key.
      for (const dpop of [undefined, await proof(await dpopKey(), 'POST', tokenUrl())]) {
        const r = await post(server, exchangeOf(subjectToken), { client: spa, ...(dpop ? { dpop } : {}) });
        assert.deepEqual([r.status, r.body.error, r.body.access_token], [400, 'invalid_dpop_proof', undefined], JSON.stringify(r.body));
      }
      const ok = await post(server, exchangeOf(subjectToken), { client: spa, dpop: await proof(key, 'POST', tokenUrl()) });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.token_type, 'DPoP');
      assert.deepEqual(payloadOf(String(ok.body.access_token)).cnf, { jkt: key.jkt });
      const asBearer = await fetch(`${server.apiUrl}/user`, { headers: { authorization: `Bearer ${String(ok.body.access_token)}` } });
      assert.equal(asBearer.status, 401);
      // A DPoP-bound actor token needs its key too.
      const app = await server.createClient({ grantTypes: ['authorization_code', 'client_credentials', TE], scope: 'user' });
      const actorKey = await dpopKey();
      const actor = await post(server, { grant_type: 'client_credentials', scope: 'user' }, { client: app, dpop: await proof(actorKey, 'POST', tokenUrl()) });
      const subject = await userToken(app);
      const withActor = exchangeOf(String(subject.body.access_token), { actor_token: String(actor.body.access_token), actor_token_type: AT });
      assert.equal((await post(server, withActor, { client: app })).body.error, 'invalid_dpop_proof');
      const acted = await post(server, withActor, { client: app, dpop: await proof(actorKey, 'POST', tokenUrl()) });
      assert.equal(acted.status, 200, JSON.stringify(acted.body));
      assert.deepEqual(payloadOf(String(acted.body.access_token)).cnf, { jkt: actorKey.jkt });
    });

    it('a certificate-bound subject is exchanged only over that certificate, and the new token stays bound to it', async () => {
      const certApp = await proxied.createClient({ grantTypes: ['client_credentials'], scope: 'user', tlsClientCertificate: cert.cert, resources: [RS] });
      const rs = await proxied.createClient({ grantTypes: [TE], scope: 'user', resources: [RS, DOWNSTREAM] });
      const t = await post(proxied, { grant_type: 'client_credentials', scope: 'user', resource: RS }, { client: certApp, cert });
      assert.equal(t.status, 200, JSON.stringify(t.body));
      assert.equal((payloadOf(String(t.body.access_token)).cnf as Record<string, string>)['x5t#S256'], cert.thumbprint);
      const params = exchangeOf(String(t.body.access_token), { audience: DOWNSTREAM });
      for (const presented of [undefined, other]) {
        const r = await post(proxied, params, { client: rs, ...(presented ? { cert: presented } : {}) });
        assert.deepEqual([r.status, r.body.error, r.body.access_token], [400, 'invalid_request', undefined], JSON.stringify(r.body));
      }
      const ok = await post(proxied, params, { client: rs, cert });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.deepEqual(payloadOf(String(ok.body.access_token)).cnf, { 'x5t#S256': cert.thumbprint });
    });

    it('an exchanged token never outlives its subject token (JWT and opaque)', async () => {
      for (const tokenFormat of ['jwt', 'opaque'] as const) {
        const app = await server.createClient({ grantTypes: ['authorization_code', TE], scope: 'user', tokenFormat });
        const t = await userToken(app);
        const introspector = await server.createClient({ grantTypes: ['client_credentials'], introspect: true });
        const info = async (tok: string) => (await (await fetch(`${server.url}/oauth/check_token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(introspector) }, body: new URLSearchParams({ token: tok }) })).json()) as { exp: number; active: boolean };
        const subjectExp = (await info(String(t.body.access_token))).exp;
        clock.offset = 3000_000;
        try {
          const r = await post(server, exchangeOf(String(t.body.access_token)), { client: app });
          assert.equal(r.status, 200, JSON.stringify(r.body));
          assert.ok(Number(r.body.expires_in) <= 600, `expires_in ${String(r.body.expires_in)}`);
          const exchanged = await info(String(r.body.access_token));
          assert.equal(exchanged.active, true);
          assert.ok(exchanged.exp <= subjectExp, `${exchanged.exp} > ${subjectExp} (${tokenFormat})`);
        } finally {
          clock.offset = 0;
        }
      }
    });
  });
}
