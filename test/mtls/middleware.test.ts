import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock } from '../../src/core/ports.js';
import { TableVerifier, gatehouseFastify } from '../../src/middleware/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { certDir, httpsCall, type CertDir, type TestCert } from './support.js';

/**
 * Another service protected with `gatehouse/middleware`, serving HTTPS and
 * asking for client certificates: a machine client's bound token works there
 * over a connection with its certificate, and only then (RFC 8705 §3).
 */
describe('gatehouse/middleware and certificate-bound tokens', () => {
  let certs: CertDir;
  let serverCert: TestCert;
  let clientCert: TestCert;
  let gatehouse: TestServer;
  let service: FastifyInstance;
  let serviceUrl: string;

  before(async () => {
    certs = certDir();
    serverCert = certs.make('services', { ip: '127.0.0.1' });
    clientCert = certs.make('nightly-export');
    gatehouse = await startServer({ env: { GATEHOUSE_TLS_CERT: serverCert.certPath, GATEHOUSE_TLS_KEY: serverCert.keyPath } });
    service = Fastify({ https: { cert: serverCert.cert, key: serverCert.key, requestCert: true, rejectUnauthorized: false } }) as unknown as FastifyInstance;
    await service.register(gatehouseFastify, {
      issuer: gatehouse.url,
      audience: gatehouse.apiUrl,
      verifier: new TableVerifier(gatehouse.gh.inspector, { audience: [gatehouse.apiUrl], clock: systemClock }),
    });
    service.get('/reports', { config: { auth: { scope: 'reports' } } }, async (req) => ({ client: req.auth!.clientId, bound: req.auth!.certThumbprint }));
    serviceUrl = await service.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await service?.close();
    await gatehouse?.close();
    certs?.cleanup();
  });

  it('accepts the bound client-credentials token with the certificate, refuses it without', async () => {
    const client = await gatehouse.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'reports', tlsClientCertificate: clientCert.cert });
    const issued = await httpsCall(`${gatehouse.url}/oauth/token`, { ca: serverCert.cert, client: clientCert, form: { grant_type: 'client_credentials', client_id: client.id } });
    assert.equal(issued.status, 200);
    const authorization = `Bearer ${issued.body.access_token as string}`;

    const ok = await httpsCall(`${serviceUrl}/reports`, { ca: serverCert.cert, client: clientCert, headers: { authorization } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { client: client.id, bound: clientCert.thumbprint });

    const bare = await httpsCall(`${serviceUrl}/reports`, { ca: serverCert.cert, headers: { authorization } });
    assert.equal(bare.status, 401);
    assert.equal(bare.body.error, 'invalid_token');
    assert.match(String(bare.headers['www-authenticate']), /error="invalid_token"/);
  });
});
