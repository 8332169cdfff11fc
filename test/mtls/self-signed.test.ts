import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { certDir, httpsCall, jwtClaims, type CertDir, type TestCert } from './support.js';

/**
 * RFC 8705 self_signed_tls_client_auth over Gatehouse's own HTTPS: a client
 * registered with its certificate authenticates with it, its tokens carry
 * `cnf.x5t#S256`, and the resource server honours them only over a
 * connection that presents the same certificate.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`self-signed certificate client authentication (${kind})`, { skip }, () => {
    let certs: CertDir;
    let serverCert: TestCert;
    let clientCert: TestCert;
    let otherCert: TestCert;
    let server: TestServer;
    let ca: string;

    before(async () => {
      certs = certDir();
      serverCert = certs.make('gatehouse', { ip: '127.0.0.1' });
      clientCert = certs.make('billing-service');
      otherCert = certs.make('intruder');
      server = await startServer({ db: kind, env: { GATEHOUSE_TLS_CERT: serverCert.certPath, GATEHOUSE_TLS_KEY: serverCert.keyPath } });
      ca = serverCert.cert;
    });
    after(async () => {
      await server?.close();
      certs?.cleanup();
    });

    const token = (form: Record<string, string>, client?: TestCert, headers?: Record<string, string>) =>
      httpsCall(`${server.url}/oauth/token`, { ca, form, ...(client ? { client } : {}), ...(headers ? { headers } : {}) });
    const user = (accessToken: string | undefined, client?: TestCert) =>
      httpsCall(`${server.apiUrl}/user`, { ca, ...(client ? { client } : {}), headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {} });

    async function mtlsClient(over: Record<string, unknown> = {}) {
      return server.createClient({ name: 'Billing', redirectUris: [], grantTypes: ['client_credentials'], scope: 'reports', tlsClientCertificate: clientCert.cert, ...over });
    }

    it('serves HTTPS and says so in the metadata (RFC 8705 §3.3, §2.1.1)', async () => {
      assert.match(server.url, /^https:/);
      const meta = await httpsCall(`${server.url}/.well-known/oauth-authorization-server`, { ca });
      assert.equal(meta.status, 200);
      assert.equal(meta.body.issuer, server.url);
      assert.equal(meta.body.tls_client_certificate_bound_access_tokens, true);
      assert.ok((meta.body.token_endpoint_auth_methods_supported as string[]).includes('self_signed_tls_client_auth'));
    });

    it('registers the client by its certificate: no secret, the thumbprint stored', async () => {
      const client = await mtlsClient();
      assert.equal(client.secret, undefined);
      const stored = await server.gh.storage.clients.get(client.id);
      assert.equal(stored?.authMethod, 'self_signed_tls_client_auth');
      assert.equal(stored?.tlsCertThumbprint, clientCert.thumbprint);
    });

    it('issues a certificate-bound JWT to the client that presents its certificate', async () => {
      const client = await mtlsClient();
      const res = await token({ grant_type: 'client_credentials', client_id: client.id }, clientCert);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.token_type, 'Bearer');
      const claims = jwtClaims(res.body.access_token as string);
      assert.deepEqual(claims.cnf, { 'x5t#S256': clientCert.thumbprint });
      assert.equal(claims.client_id, client.id);

      // Introspection tells a resource server the binding (RFC 8705 §3.2).
      const rs = await server.createClient({ name: 'RS', redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
      const basic = `Basic ${Buffer.from(`${rs.id}:${rs.secret}`).toString('base64')}`;
      const info = await httpsCall(`${server.url}/oauth/check_token`, { ca, headers: { authorization: basic }, form: { token: res.body.access_token as string } });
      assert.equal(info.status, 200);
      assert.equal(info.body.active, true);
      assert.deepEqual(info.body.cnf, { 'x5t#S256': clientCert.thumbprint });
    });

    it('refuses the client without its certificate, with another one, or with a secret: invalid_client', async () => {
      const client = await mtlsClient();
      for (const [cert, description] of [[undefined, /certificate is required/], [otherCert, /not the registered one/]] as const) {
        const res = await token({ grant_type: 'client_credentials', client_id: client.id }, cert);
        assert.equal(res.status, 401);
        assert.equal(res.body.error, 'invalid_client');
        assert.match(String(res.body.error_description), description);
        // RFC 6749 §5.2: a challenge names the method the client used; Basic is not this client's.
        assert.equal(res.headers['www-authenticate'], undefined);
      }
      const withSecret = await token({ grant_type: 'client_credentials', client_id: client.id, client_secret: 'guess' }, clientCert);
      assert.equal(withSecret.status, 401);
      assert.equal(withSecret.body.error, 'invalid_client');
      const basic = await token({ grant_type: 'client_credentials' }, clientCert, { authorization: `Basic ${Buffer.from(`${client.id}:x`).toString('base64')}` });
      assert.equal(basic.status, 401);
      assert.equal(basic.body.error, 'invalid_client');
    });

    it('a secret client is unaffected by a certificate it happens to present', async () => {
      const client = await server.createClient({ name: 'Plain', redirectUris: [], grantTypes: ['client_credentials'], authMethod: 'client_secret_post' });
      const res = await token({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret! }, otherCert);
      assert.equal(res.status, 200);
      assert.equal(jwtClaims(res.body.access_token as string).cnf, undefined);
    });

    for (const tokenFormat of ['jwt', 'opaque'] as const) {
      it(`the resource server accepts a bound ${tokenFormat} token only with the same certificate (RFC 8705 §3)`, async () => {
        const alice = await server.createUser(`alice_${tokenFormat}`);
        const client = await mtlsClient({ grantTypes: ['password'], scope: 'user', tokenFormat });
        const res = await token({ grant_type: 'password', client_id: client.id, username: alice.username, password: alice.password, scope: 'user' }, clientCert);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const at = res.body.access_token as string;

        const ok = await user(at, clientCert);
        assert.equal(ok.status, 200, JSON.stringify(ok.body));
        assert.equal(ok.body.username, alice.username);

        const bare = await user(at);
        assert.equal(bare.status, 401);
        assert.equal(bare.body.error, 'invalid_token');
        assert.match(String(bare.headers['www-authenticate']), /^Bearer .*error="invalid_token"/);
        assert.match(String(bare.body.error_description), /bound to a TLS client certificate/);

        const stolen = await user(at, otherCert);
        assert.equal(stolen.status, 401);
        assert.equal(stolen.body.error, 'invalid_token');
        assert.match(String(stolen.body.error_description), /another TLS client certificate/);
      });
    }

    it('a client-credentials token passes the binding check only with its certificate', async () => {
      const client = await mtlsClient({ scope: 'user' });
      const at = (await token({ grant_type: 'client_credentials', client_id: client.id }, clientCert)).body.access_token as string;
      const bare = await user(at);
      assert.equal(bare.status, 401);
      assert.match(String(bare.body.error_description), /bound to a TLS client certificate/);
      // With the certificate the token is good; /user then says it stands for no user.
      const withCert = await user(at, clientCert);
      assert.equal(withCert.status, 401);
      assert.match(String(withCert.body.error_description), /does not belong to a user/);
    });

    it('refreshes stay bound: the refresh grant needs the certificate too', async () => {
      const bob = await server.createUser('bob');
      const client = await mtlsClient({ grantTypes: ['password', 'refresh_token'], scope: 'user' });
      const first = await token({ grant_type: 'password', client_id: client.id, username: bob.username, password: bob.password }, clientCert);
      assert.equal(first.status, 200);
      const stolen = await token({ grant_type: 'refresh_token', client_id: client.id, refresh_token: first.body.refresh_token as string });
      assert.equal(stolen.status, 401);
      assert.equal(stolen.body.error, 'invalid_client');
      const next = await token({ grant_type: 'refresh_token', client_id: client.id, refresh_token: first.body.refresh_token as string }, clientCert);
      assert.equal(next.status, 200);
      assert.deepEqual(jwtClaims(next.body.access_token as string).cnf, { 'x5t#S256': clientCert.thumbprint });
    });
  });
}
