import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServer, type TestServer } from '../helpers/server.js';
import { certDir, type CertDir, type TestCert } from './support.js';

const run = promisify(execFile);
const ADMIN = 'admin-token-for-tests-0123456789';

/** Registering certificate clients and allow-lists: bad input is a 400 (API) or exit 1 (CLI), never a 500. */
describe('registering application-level access', () => {
  let server: TestServer;
  let certs: CertDir;
  let cert: TestCert;
  let dir: string;

  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
    certs = certDir();
    cert = certs.make('svc');
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  });
  after(async () => {
    await server?.close();
    certs?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const register = (body: Record<string, unknown>) => fetch(`${server.url}/admin/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Svc', grant_types: ['client_credentials'], ...body }),
  });

  it('the admin API takes a PEM certificate, or its thumbprint, and an allow-list', async () => {
    const res = await register({ tls_client_certificate: cert.cert, allowed_addresses: '10.0.0.0/8, 192.0.2.7' });
    assert.equal(res.status, 201);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.token_endpoint_auth_method, 'self_signed_tls_client_auth');
    assert.equal(body.tls_client_certificate_thumbprint, cert.thumbprint);
    assert.deepEqual(body.allowed_addresses, ['10.0.0.0/8', '192.0.2.7/32']);
    assert.equal(body.client_secret, undefined);

    const byThumbprint = await register({ token_endpoint_auth_method: 'self_signed_tls_client_auth', tls_client_certificate_thumbprint: cert.thumbprint });
    assert.equal(byThumbprint.status, 201);
  });

  it('refuses malformed input with invalid_request', async () => {
    const cases: Record<string, unknown>[] = [
      { allowed_addresses: ['10.0.0.0/33'] },
      { allowed_addresses: 'not-an-address' },
      { allowed_addresses: [42] },
      { tls_client_certificate: 'not a certificate' },
      { tls_client_certificate: cert.key },
      { tls_client_certificate_thumbprint: 'short' },
      { token_endpoint_auth_method: 'self_signed_tls_client_auth' },
      { token_endpoint_auth_method: 'client_secret_basic', tls_client_certificate: cert.cert },
      { tls_client_certificate: cert.cert, tls_client_certificate_thumbprint: cert.thumbprint },
      { tls_client_certificate: 12 },
    ];
    for (const c of cases) {
      const res = await register(c);
      assert.equal(res.status, 400, JSON.stringify(c));
      assert.equal(((await res.json()) as Record<string, string>).error, 'invalid_request');
    }
  });

  it('the CLI registers a certificate client from a file', async () => {
    // The test server's database is in memory; the CLI gets a file of its own.
    const url = `sqlite:${join(dir, 'cli.db')}`;
    const ok = await run(process.execPath, ['bin/gatehouse.mjs', 'client', 'create', '--name', 'Svc', '--grant-types', 'client_credentials',
      '--tls-client-certificate', cert.certPath, '--allowed-addresses', '10.0.0.0/8,127.0.0.1', '--database-url', url, '--json']);
    const out = JSON.parse(ok.stdout) as Record<string, unknown>;
    assert.equal(out.token_endpoint_auth_method, 'self_signed_tls_client_auth');
    assert.equal(out.tls_client_certificate_thumbprint, cert.thumbprint);
    assert.deepEqual(out.allowed_addresses, ['10.0.0.0/8', '127.0.0.1/32']);
    assert.equal(out.client_secret, undefined);

    const bad = await run(process.execPath, ['bin/gatehouse.mjs', 'client', 'create', '--name', 'Svc', '--grant-types', 'client_credentials',
      '--allowed-addresses', '10.0.0.0/99', '--database-url', url, '--json']).then(() => undefined, (e: { code: number; stderr: string }) => e);
    assert.equal(bad?.code, 1);
    assert.match(bad!.stderr, /allowed addresses: not an IP address or CIDR block: 10\.0\.0\.0\/99/);

    const missing = await run(process.execPath, ['bin/gatehouse.mjs', 'client', 'create', '--name', 'Svc', '--grant-types', 'client_credentials',
      '--tls-client-certificate', join(dir, 'nope.pem'), '--database-url', url, '--json']).then(() => undefined, (e: { code: number; stderr: string }) => e);
    assert.equal(missing?.code, 1);
    assert.match(missing!.stderr, /cannot read/);

    writeFileSync(join(dir, 'junk.pem'), 'junk');
    const junk = await run(process.execPath, ['bin/gatehouse.mjs', 'client', 'create', '--name', 'Svc', '--grant-types', 'client_credentials',
      '--tls-client-certificate', join(dir, 'junk.pem'), '--database-url', url, '--json']).then(() => undefined, (e: { code: number; stderr: string }) => e);
    assert.equal(junk?.code, 1);
    assert.match(junk!.stderr, /not a PEM X\.509 certificate/);
  });
});
