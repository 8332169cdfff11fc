import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { certDir, jwtClaims, type CertDir, type TestCert } from './support.js';

/**
 * Behind a TLS-terminating proxy the client certificate arrives in a header
 * (GATEHOUSE_CLIENT_CERT_HEADER), believed only from a trusted proxy
 * (GATEHOUSE_TRUST_PROXY). The tests play the proxy on loopback.
 */
describe('client certificates forwarded by a TLS-terminating proxy', () => {
  let certs: CertDir;
  let clientCert: TestCert;
  let behindProxy: TestServer;
  let untrusted: TestServer;

  before(async () => {
    certs = certDir();
    clientCert = certs.make('reporting-job');
    behindProxy = await startServer({ env: { GATEHOUSE_TRUST_PROXY: 'loopback', GATEHOUSE_CLIENT_CERT_HEADER: 'X-Client-Cert' } });
    // The proxy is somewhere else: requests from loopback are not from it.
    untrusted = await startServer({ env: { GATEHOUSE_TRUST_PROXY: '10.9.8.7', GATEHOUSE_CLIENT_CERT_HEADER: 'x-client-cert' } });
  });
  after(async () => {
    await behindProxy?.close();
    await untrusted?.close();
    certs?.cleanup();
  });

  const der = () => Buffer.from(clientCert.cert.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  /** nginx's $ssl_client_escaped_cert, RFC 9440's Client-Cert byte sequence, and a PEM folded onto one line. */
  const forms = () => ({
    'URL-encoded PEM': encodeURIComponent(clientCert.cert),
    'RFC 9440 byte sequence': `:${der().toString('base64')}:`,
    'PEM on one line': clientCert.cert.replace(/\n/g, ' '),
  });

  async function call(s: TestServer, clientId: string, header?: string) {
    const res = await fetch(`${s.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(header ? { 'x-client-cert': header } : {}) },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  for (const form of ['URL-encoded PEM', 'RFC 9440 byte sequence', 'PEM on one line'] as const) {
    it(`authenticates with the forwarded certificate (${form}) and binds the token to it`, async () => {
      const client = await behindProxy.createClient({ redirectUris: [], grantTypes: ['client_credentials'], tlsClientCertificateThumbprint: clientCert.thumbprint });
      const res = await call(behindProxy, client.id, forms()[form]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(jwtClaims(res.body.access_token as string).cnf, { 'x5t#S256': clientCert.thumbprint });
    });
  }

  it('ignores the header from anyone but the trusted proxy', async () => {
    const client = await untrusted.createClient({ redirectUris: [], grantTypes: ['client_credentials'], tlsClientCertificate: clientCert.cert });
    const res = await call(untrusted, client.id, encodeURIComponent(clientCert.cert));
    assert.equal(res.status, 401);
    assert.equal(res.body.error, 'invalid_client');
  });

  it('a missing or unreadable header is no certificate: invalid_client, never a 500', async () => {
    const client = await behindProxy.createClient({ redirectUris: [], grantTypes: ['client_credentials'], tlsClientCertificate: clientCert.cert });
    for (const header of [undefined, 'garbage', ':bm90IGEgY2VydA==:', '%E0%A4%A', '-----BEGIN CERTIFICATE-----AAAA-----END CERTIFICATE-----']) {
      const res = await call(behindProxy, client.id, header);
      assert.equal(res.status, 401, `header ${header}`);
      assert.equal(res.body.error, 'invalid_client');
    }
  });

  it('the resource server reads the forwarded certificate the same way', async () => {
    const carol = await behindProxy.createUser('carol');
    const client = await behindProxy.createClient({ redirectUris: [], grantTypes: ['password'], scope: 'user', tlsClientCertificate: clientCert.cert });
    const res = await fetch(`${behindProxy.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-client-cert': encodeURIComponent(clientCert.cert) },
      body: new URLSearchParams({ grant_type: 'password', client_id: client.id, username: carol.username, password: carol.password }),
    });
    const at = ((await res.json()) as Record<string, string>).access_token!;
    const withCert = await fetch(`${behindProxy.apiUrl}/user`, { headers: { authorization: `Bearer ${at}`, 'x-client-cert': encodeURIComponent(clientCert.cert) } });
    assert.equal(withCert.status, 200);
    const without = await fetch(`${behindProxy.apiUrl}/user`, { headers: { authorization: `Bearer ${at}` } });
    assert.equal(without.status, 401);
    assert.match(without.headers.get('www-authenticate') ?? '', /invalid_token/);
  });
});
