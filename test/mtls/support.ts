import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A key pair and self-signed certificate made with openssl for this run. */
export interface TestCert {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
  /** RFC 8705 x5t#S256. */
  thumbprint: string;
}

export interface CertDir {
  make(name: string, opts?: { ip?: string }): TestCert;
  cleanup(): void;
}

/** A temporary directory of throw-away certificates (P-256, one day). */
export function certDir(): CertDir {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-mtls-'));
  return {
    make(name, opts = {}) {
      const keyPath = join(dir, `${name}.key`);
      const certPath = join(dir, `${name}.pem`);
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
        '-keyout', keyPath, '-out', certPath, '-subj', `/CN=${name}`,
        ...(opts.ip ? ['-addext', `subjectAltName=IP:${opts.ip}`] : []),
      ], { stdio: 'pipe' });
      const cert = readFileSync(certPath, 'utf8');
      return { certPath, keyPath, cert, key: readFileSync(keyPath, 'utf8'), thumbprint: createHash('sha256').update(new X509Certificate(cert).raw).digest('base64url') };
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/**
 * One HTTPS request that trusts `ca` (the test server's self-signed
 * certificate) and presents `client`'s certificate when given.
 */
export function httpsCall(url: string, opts: { ca: string; client?: TestCert; method?: string; headers?: Record<string, string>; form?: Record<string, string> }): Promise<Reply> {
  const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {
      method: opts.method ?? (body ? 'POST' : 'GET'),
      ca: opts.ca,
      ...(opts.client ? { cert: opts.client.cert, key: opts.client.key } : {}),
      headers: { ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...opts.headers },
      // A fresh connection each time: a pooled one would carry another call's certificate.
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: Record<string, unknown> = {};
        try {
          parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          parsed = { text };
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The claims of a JWT, unverified (the tests check what the server put in). */
export function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
