import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import * as oauth from 'oauth4webapi';
import { gatehouseFastify, gatehouseMiddleware, gatehouseResourceMetadata, type GuardedRequest } from 'gatehouse/middleware';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { callUser, seed } from '../resource/support.js';
import { authorize, REDIRECT } from '../helpers/authorize.js';

const WELL_KNOWN = '/.well-known/oauth-protected-resource';
/** The `resource_metadata` attribute of a challenge (RFC 9728 §5.1). */
const metadataOf = (challenge: string | null) => /resource_metadata="([^"]+)"/.exec(challenge ?? '')?.[1];

for (const { kind, skip } of await databaseKinds()) {
  describe(`protected resource metadata, RFC 9728 (${kind})`, { skip }, () => {
    let server: TestServer;
    let s: Awaited<ReturnType<typeof seed>>;
    before(async () => {
      server = await startServer({ db: kind });
      s = await seed(server);
    });
    after(() => server.close());

    it('{api_url}/.well-known/oauth-protected-resource names the resource, its authorization server, bearer methods and scopes', async () => {
      const res = await fetch(`${server.apiUrl}${WELL_KNOWN}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^application\/json/);
      const doc = (await res.json()) as Record<string, unknown>;
      assert.equal(doc.resource, server.apiUrl);
      assert.deepEqual(doc.authorization_servers, [server.url]);
      assert.deepEqual(doc.bearer_methods_supported, ['header', 'body', 'query']);
      assert.deepEqual(doc.scopes_supported, ['user', 'profile', 'email']);
      assert.equal(doc.tls_client_certificate_bound_access_tokens, true);
      // The authorization server it names really is one (RFC 8414), and issues tokens for this resource.
      const as = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.equal(as.issuer, server.url);
    });

    it('every 401 (and the 403) of the resource server carries resource_metadata in its challenge', async () => {
      const expected = `${server.apiUrl}${WELL_KNOWN}`;
      const noToken = await callUser(server.apiUrl);
      assert.equal(noToken.status, 401);
      // Beside it, the DPoP challenge (RFC 9449 §7.1): one header, two challenges.
      assert.equal(noToken.challenge, `Bearer realm="gatehouse", resource_metadata="${expected}", DPoP algs="ES256 RS256 PS256 EdDSA Ed25519"`);
      for (const a of [
        await callUser(server.apiUrl, { token: 'not-a-token' }),
        await callUser(server.apiUrl, { token: `${(await s.token('user')).slice(0, -4)}AAAA` }),
        // A client acting for itself: refused in the handler, not the guard.
        await callUser(server.apiUrl, { token: await s.clientToken() }),
      ]) {
        assert.equal(a.status, 401);
        assert.equal(a.body.error, 'invalid_token');
        assert.equal(metadataOf(a.challenge), expected, a.challenge ?? '');
        assert.match(a.challenge!, /^Bearer realm="gatehouse", error="invalid_token"/);
      }
      const narrow = await callUser(server.apiUrl, { token: await s.token('chat') });
      assert.equal(narrow.status, 403);
      assert.equal(metadataOf(narrow.challenge), expected);
      // A request that is not an authentication problem has no challenge to extend.
      assert.equal((await fetch(`${server.apiUrl}/healthz`)).headers.get('www-authenticate'), null);
    });

    it('bad requests to the metadata address: other methods, odd queries and paths are refused without a 5xx', async () => {
      assert.equal((await fetch(`${server.apiUrl}${WELL_KNOWN}?x=%ZZ&resource=http://evil`)).status, 200);
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const res = await fetch(`${server.apiUrl}${WELL_KNOWN}`, { method, headers: { 'content-type': 'application/json' }, body: '{}' });
        assert.ok(res.status >= 400 && res.status < 500, `${method}: ${res.status}`);
      }
      for (const path of [`${WELL_KNOWN}/`, `${WELL_KNOWN}/x`, `${WELL_KNOWN}%00`, `${WELL_KNOWN}/%ZZ`]) {
        const res = await fetch(`${server.apiUrl}${path}`);
        assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
      }
      const head = await fetch(`${server.apiUrl}${WELL_KNOWN}`, { method: 'HEAD' });
      assert.equal(head.status, 200);
    });

    it('from the resource URL alone to a token (oauth4webapi): challenge → resource metadata → authorization server metadata → code flow → the resource answers', async () => {
      const resource = new URL(server.apiUrl);
      // 1. The client calls the resource without a token and reads where its metadata is.
      const first = await fetch(new URL('/user', resource));
      assert.equal(first.status, 401);
      assert.equal(metadataOf(first.headers.get('www-authenticate')), `${server.apiUrl}${WELL_KNOWN}`);
      // 2. RFC 9728 discovery, with the library's own checks (§3.3: `resource` must match).
      const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, { [oauth.allowInsecureRequests]: true }));
      const issuer = new URL(rs.authorization_servers![0]!);
      // 3. RFC 8414 discovery of that authorization server.
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }));
      // 4. A code flow with PKCE, asking for a scope the resource said it supports.
      const registered = await server.createClient({ redirectUris: [REDIRECT], scope: rs.scopes_supported!.join(' '), trusted: true });
      const client: oauth.Client = { client_id: registered.id };
      const auth = oauth.ClientSecretBasic(registered.secret!);
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({
        client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'user', state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      }).toString();
      const user = await server.createUser('mcp-user');
      const callback = await authorize(new Agent(server.url), url, { user });
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client,
        await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, { [oauth.allowInsecureRequests]: true }));
      // 5. The resource answers.
      const me = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL('/user', resource), undefined, undefined, { [oauth.allowInsecureRequests]: true });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { username: string }).username, 'mcp-user');
    });
  });
}

describe('gatehouse/middleware publishes RFC 9728 metadata for your API', () => {
  let server: TestServer;
  let s: Awaited<ReturnType<typeof seed>>;
  let fastifyApp: FastifyInstance;
  let nodeServer: Server;
  let fastifyUrl: string;
  let nodeUrl: string;
  before(async () => {
    server = await startServer();
    s = await seed(server);
    fastifyApp = Fastify();
    // The API's identifier has a path: the metadata goes between host and path (RFC 9728 §3.1).
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    fastifyUrl = `http://127.0.0.1:${port}`;
    await fastifyApp.register(async (api) => {
      await api.register(gatehouseFastify, {
        issuer: server.url, audience: [`${fastifyUrl}/notes-api`, server.apiUrl],
        resourceMetadata: { scopesSupported: ['chat'], resourceName: 'Notes', resourceDocumentation: 'https://notes.example.test/docs' },
      });
      api.get('/notes-api/notes', { config: { auth: { scope: 'chat' } } }, async (req) => ({ owner: req.auth!.subject }));
    });
    await fastifyApp.listen({ host: '127.0.0.1', port });

    const options = { issuer: server.url, audience: server.apiUrl, resourceMetadata: true as const };
    const notes = gatehouseMiddleware(options)('chat');
    const metadata = gatehouseResourceMetadata(options);
    nodeServer = createServer((req: GuardedRequest, res) => metadata(req, res, () => notes(req, res, () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ owner: req.auth!.subject }));
    })));
    await new Promise<void>((r) => nodeServer.listen(0, '127.0.0.1', r));
    nodeUrl = `http://127.0.0.1:${(nodeServer.address() as AddressInfo).port}`;
  });
  after(async () => {
    await fastifyApp.close();
    nodeServer.closeAllConnections();
    await new Promise((r) => nodeServer.close(r));
    await server.close();
  });

  it('Fastify: the document at the §3.1 address, and resource_metadata in the plugin\'s challenges', async () => {
    const resource = new URL(`${fastifyUrl}/notes-api`);
    const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, { [oauth.allowInsecureRequests]: true }));
    assert.deepEqual(rs.authorization_servers, [server.url]);
    assert.deepEqual(rs.scopes_supported, ['chat']);
    assert.equal(rs.resource_name, 'Notes');
    assert.equal(rs.resource_documentation, 'https://notes.example.test/docs');
    const missing = await fetch(`${fastifyUrl}/notes-api/notes`);
    assert.equal(missing.status, 401);
    assert.equal(metadataOf(missing.headers.get('www-authenticate')), `${fastifyUrl}${WELL_KNOWN}/notes-api`);
    const ok = await fetch(`${fastifyUrl}/notes-api/notes`, { headers: { authorization: `Bearer ${await s.token('chat')}` } });
    assert.equal(ok.status, 200);
    const narrow = await fetch(`${fastifyUrl}/notes-api/notes`, { headers: { authorization: `Bearer ${await s.token('user')}` } });
    assert.equal(narrow.status, 403);
    assert.equal(metadataOf(narrow.headers.get('www-authenticate')), `${fastifyUrl}${WELL_KNOWN}/notes-api`);
  });

  it('plain Node: gatehouseResourceMetadata serves it, the middleware\'s challenges name it', async () => {
    const doc = (await (await fetch(`${nodeUrl}${WELL_KNOWN}`)).json()) as Record<string, unknown>;
    assert.equal(doc.resource, server.apiUrl);
    assert.deepEqual(doc.authorization_servers, [server.url]);
    const bad = await fetch(`${nodeUrl}/notes`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(bad.status, 401);
    assert.equal(metadataOf(bad.headers.get('www-authenticate')), `${new URL(server.apiUrl).origin}${WELL_KNOWN}`);
    assert.equal((await fetch(`${nodeUrl}/notes`, { headers: { authorization: `Bearer ${await s.token('chat')}` } })).status, 200);
    // Other methods at the metadata address go on to the application (here: the token check).
    assert.equal((await fetch(`${nodeUrl}${WELL_KNOWN}`, { method: 'POST' })).status, 401);
  });

  it('a resource identifier that is not a URL is refused when the middleware is set up', () => {
    assert.throws(() => gatehouseMiddleware({ issuer: server.url, audience: 'not a url', resourceMetadata: true }), TypeError);
    assert.throws(() => gatehouseResourceMetadata({ issuer: server.url, audience: [], resourceMetadata: true }), TypeError);
  });
});
